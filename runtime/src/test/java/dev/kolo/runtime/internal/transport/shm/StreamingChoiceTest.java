package dev.kolo.runtime.internal.transport.shm;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The writer takes the way of copying whose two copies, its own and the reader's, cost less, and tries the other
 * again now and then. Costs are nanoseconds per byte, copies 512 KiB, one a millisecond.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class StreamingChoiceTest {
    private static final long BYTES = 1 << 19;
    private static final long MS = 1_000_000L;

    /** What each way costs the writer and the reader. */
    private record Machine(double writePlain, double readPlain, double writeStreamed, double readStreamed) {
    }

    /** A writer and a reader over one ring, fed copies that cost what {@code m} says; returns frames streamed. */
    private static final class Pair {
        final StreamingChoice choice = new StreamingChoice();
        final CopyCosts reads = new CopyCosts();
        double publishedPlain = Double.NaN;
        double publishedStreamed = Double.NaN;
        long now;

        int run(Machine m, int frames) {
            int streamed = 0;
            for (int i = 0; i < frames; i++, now += MS) {
                boolean s = choice.streaming();
                streamed += s ? 1 : 0;
                choice.wrote(BYTES, (long) ((s ? m.writeStreamed : m.writePlain) * BYTES), now, publishedPlain,
                        publishedStreamed);
                if (reads.copied(s, BYTES, (long) ((s ? m.readStreamed : m.readPlain) * BYTES), now)) {
                    if (s) {
                        publishedStreamed = reads.cost(true);
                    } else {
                        publishedPlain = reads.cost(false);
                    }
                }
            }
            return streamed;
        }
    }

    /** Cores that share a cache: plain copies cost 24 + 24 us a MiB, streamed ones 38 + 40. */
    private static final Machine CLOSE = new Machine(0.023, 0.023, 0.036, 0.038);
    /** Cores apart: the writer's plain copy takes every line from the reader's cache (85 us a MiB). */
    private static final Machine APART = new Machine(0.081, 0.024, 0.037, 0.039);

    @Test
    void coresThatShareACacheGetPlainCopies() {
        Pair p = new Pair();
        p.run(CLOSE, 50);
        int streamed = p.run(CLOSE, 2000);
        assertFalse(p.choice.streaming());
        assertTrue(streamed <= 60, "the retries of streaming cost a few frames a second: " + streamed + " of 2000");
    }

    @Test
    void aWriterSlowedByThePlacementStreamsThoughTheReaderIsNot() {
        Pair p = new Pair();
        p.run(CLOSE, 50);
        assertFalse(p.choice.streaming());
        p.run(APART, 20); // the host moved the two virtual CPUs apart: only the writer's copies got dearer
        assertTrue(p.choice.streaming(), "plain costs 0.105 a byte, streaming 0.076: streaming is chosen");
        int streamed = p.run(APART, 2000);
        assertTrue(streamed >= 1940, "retries of plain copies find them dear again, and cost a few frames a second: "
                + streamed + " of 2000 streamed");
        p.run(CLOSE, 1000); // and back
        int after = p.run(CLOSE, 1000);
        assertTrue(after <= 40, "a retry found plain copies cheaper again: " + after + " of 1000 streamed");
    }

    @Test
    void theReadersCostsCountToo() {
        // The writer's copies cost the same both ways; the reader's plain ones are dearer (it reads lines the writer
        // holds where the cores sit apart): streaming wins on the reader's side alone.
        Machine readerSide = new Machine(0.030, 0.090, 0.030, 0.040);
        Pair p = new Pair();
        p.run(readerSide, 100);
        int streamed = p.run(readerSide, 1000);
        assertTrue(streamed >= 960, streamed + " of 1000 streamed");
    }

    @Test
    void aCopyTheSchedulerInterruptedChangesNothing() {
        CopyCosts costs = new CopyCosts();
        for (int i = 0; i < CopyCosts.WINDOW; i++) {
            costs.copied(false, BYTES, i == 1 ? 50 * BYTES : BYTES / 10, i * MS);
        }
        assertTrue(Math.abs(costs.cost(false) - 0.1) < 1e-4, "the least of the window: " + costs.cost(false));
        assertTrue(Double.isNaN(costs.cost(true)), "never streamed, never measured");
        costs.copied(true, BYTES, BYTES, 5 * MS);
        costs.copied(false, BYTES, BYTES, 6 * MS);
        costs.copied(false, BYTES, BYTES, 7 * MS);
        assertTrue(Double.isNaN(costs.cost(true)), "a window that changed way is dropped");
    }
}
