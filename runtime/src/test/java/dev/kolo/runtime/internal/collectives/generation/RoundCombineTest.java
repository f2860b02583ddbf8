package dev.kolo.runtime.internal.collectives.generation;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.collectives.RoundCombiner;
import dev.kolo.runtime.internal.transport.connect.TransportOptions;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The agreement round's recursive-doubling combine on jobs of 2 to 9 ranks, with a combiner that concatenates
 * (lower first): every rank must end with every rank's message in rank order, whatever their lengths, having sent
 * log2 n messages (one more or fewer where the size is not a power of two). A combiner that refuses on one rank
 * fails the round on every rank at once, not at the progress deadline.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(120)
class RoundCombineTest {
    private static final int MAX_SIZE = 9;
    private final List<TestRings> clusters = new ArrayList<>();

    @BeforeAll
    void formRings() throws Exception {
        TransportOptions options = TransportOptions.builder().progressTimeout(Duration.ofSeconds(60)).build();
        for (int n = 2; n <= MAX_SIZE; n++) {
            clusters.add(TestRings.formed(n, options));
        }
    }

    @AfterAll
    void closeRings() {
        clusters.forEach(TestRings::close);
    }

    private static final RoundCombiner CONCATENATE = (lower, lowerLength, lowerRank, upper, upperLength, upperRank,
            out) -> {
        out.put(0, lower, 0, lowerLength);
        out.put(lowerLength, upper, 0, upperLength);
        return lowerLength + upperLength;
    };

    /** Rank r's message: r + 1 bytes of value r (lengths differ, so a message in the wrong place shows). */
    private static byte[] message(int rank) {
        byte[] m = new byte[rank + 1];
        java.util.Arrays.fill(m, (byte) rank);
        return m;
    }

    @ParameterizedTest(name = "np={0}")
    @ValueSource(ints = {2, 3, 4, 5, 6, 7, 8, 9})
    void everyRankEndsWithEveryMessageInRankOrder(int n) throws Exception {
        TestRings c = clusters.get(n - 2);
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (int r = 0; r < n; r++) {
            all.write(message(r));
        }
        for (int round = 0; round < 3; round++) { // again: the buffers rotate between rounds
            List<Object[]> out = c.onAll((rank, ring) -> {
                byte[] mine = message(rank);
                int max = all.size();
                ByteBuffer box = ring.roundOutbox(max);
                box.put(0, mine);
                int length = ring.combineRound(mine.length, max, CONCATENATE);
                byte[] got = new byte[length];
                ring.roundResult().get(0, got);
                return new Object[] {got, ring.roundMessagesSent()};
            }, 30);
            int steps = Integer.numberOfTrailingZeros(Integer.highestOneBit(n));
            int rem = n - Integer.highestOneBit(n);
            for (int r = 0; r < n; r++) {
                assertArrayEquals(all.toByteArray(), (byte[]) out.get(r)[0], "np " + n + " rank " + r);
                int expected = r < 2 * rem ? (r % 2 == 0 ? 1 : steps + 2) : steps;
                assertEquals(expected, out.get(r)[1], "np " + n + " rank " + r + ": messages sent");
            }
        }
    }

    /**
     * A rank whose combiner refuses aborts the generation: ranks that still need it fail in the round, ranks that
     * finished it (their steps did not pass through that rank) in their next op; all well before the deadline.
     */
    @Test
    void aCombinerThatRefusesFailsEveryRankAtOnce() throws Exception {
        try (TestRings c = TestRings.formed(5, TransportOptions.builder().progressTimeout(Duration.ofSeconds(60))
                .build())) {
            refuseOnRank2(c);
        }
    }

    private static void refuseOnRank2(TestRings c) throws Exception {
        long start = System.nanoTime();
        long seq = c.reserve(2);
        List<Future<Integer>> fs = c.submitAll((rank, ring) -> {
            RoundCombiner combiner = rank != 2 ? CONCATENATE : (l, ll, lr, u, ul, ur, o) -> {
                throw new KoloException("protocol error: test refusal");
            };
            ring.roundOutbox(64).put(0, (byte) rank);
            int length = ring.combineRound(1, 64, combiner);
            ring.barrier(seq + 1);
            return length;
        });
        for (int r = 0; r < fs.size(); r++) {
            Future<Integer> f = fs.get(r);
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(20, TimeUnit.SECONDS),
                    "rank " + r);
            assertTrue(e.getCause() instanceof KoloException, "rank " + r + ": " + e.getCause());
            if (r != 2) {
                assertTrue(e.getCause() instanceof WorkerLostException, "rank " + r + ": " + e.getCause());
            }
        }
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
        assertTrue(seconds < 20, "took " + seconds + " s: the ranks waited for the progress deadline");
    }
}
