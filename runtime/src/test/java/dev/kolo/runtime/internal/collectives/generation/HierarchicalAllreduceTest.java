package dev.kolo.runtime.internal.collectives.generation;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.collectives.Hierarchy;
import dev.kolo.runtime.internal.transport.connect.TransportOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Allreduces that span hosts, against the double-precision reference: ranks on loopback addresses 127.0.0.1,
 * 127.0.0.2, ... are ranks of different hosts, sharing memory within an address and talking TCP across. Layouts with
 * the same number of ranks per host (each rank carries its share across), with different numbers, with ranks of one
 * host numbered apart, and with one leader per host; contiguous buffers and fused segments; every dtype.
 */
@Timeout(120)
class HierarchicalAllreduceTest {
    /** Above the small-message sizes (8 KiB and 64 KiB), with odd lengths and a large one. */
    private static final int[] LENGTHS = {20_001, 65_537, 1_000_003};

    static Stream<Arguments> layouts() {
        return Stream.of(
                Arguments.of("2 hosts x 2", List.of("127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.2"), Hierarchy.AUTO),
                Arguments.of("2 hosts x 2, ranks interleaved", List.of("127.0.0.1", "127.0.0.2", "127.0.0.1",
                        "127.0.0.2"), Hierarchy.AUTO),
                Arguments.of("3 + 1", List.of("127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.1"), Hierarchy.AUTO),
                Arguments.of("2 + 2 + 1", List.of("127.0.0.1", "127.0.0.2", "127.0.0.3", "127.0.0.1", "127.0.0.2"),
                        Hierarchy.AUTO),
                Arguments.of("2 hosts x 2, leaders", List.of("127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.2"),
                        Hierarchy.LEADERS));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("layouts")
    void everyTypeMatchesTheReferenceAndEveryRankHoldsTheSameBytes(String name, List<String> hosts, Hierarchy h)
            throws Exception {
        int n = hosts.size();
        try (TestRings c = TestRings.onHosts(hosts, "hier", TransportOptions.builder().chunkBytes(64 * 1024).build())) {
            c.form(1, h);
            for (GenerationDataPlane r : c.rings) {
                assertTrue(r.hierarchicalAllreduce(), name);
                boolean alone = hosts.stream().filter(hosts.get(r.rank())::equals).count() == 1;
                assertEquals(alone ? "tcp" : "shm+tcp", r.transport(), name + " rank " + r.rank());
            }
            for (DType t : DType.values()) {
                List<RingCollectivesTest.Case> cases = new ArrayList<>();
                for (int len : LENGTHS) {
                    cases.add(new RingCollectivesTest.Case(ReduceOp.SUM, len, 1.0, 1.0));
                }
                cases.add(new RingCollectivesTest.Case(ReduceOp.AVERAGE, 65_537, 0.5, 3.0));
                cases.add(new RingCollectivesTest.Case(ReduceOp.AVERAGE, 1_000_003, 0.5, 3.0));
                cases.add(new RingCollectivesTest.Case(ReduceOp.MAX, 1_000_003, 1.0, 1.0));
                cases.add(new RingCollectivesTest.Case(ReduceOp.MAX, 20_001, 1.0, 1.0));
                cases.add(new RingCollectivesTest.Case(ReduceOp.MIN, 20_001, 1.0, 2.0));
                cases.add(new RingCollectivesTest.Case(ReduceOp.PRODUCT, 20_001, 1.0, 1.0));
                long base = c.reserve(cases.size());
                List<List<byte[]>> results = c.onAll((rank, ring) -> {
                    ByteBuffer buf = Elements.direct(1_000_003 * 8);
                    List<byte[]> out = new ArrayList<>();
                    for (int k = 0; k < cases.size(); k++) {
                        RingCollectivesTest.Case cs = cases.get(k);
                        for (int i = 0; i < cs.count(); i++) {
                            Elements.put(t, buf, i, RingCollectivesTest.input(t, cs.op(), rank, i));
                        }
                        ring.allreduce(base + k, buf, t, cs.count(), cs.op(), cs.prescale(), cs.postscale());
                        out.add(Elements.bytes(buf, 0, cs.count() * t.byteSize()));
                    }
                    return out;
                }, 60);
                for (int k = 0; k < cases.size(); k++) {
                    RingCollectivesTest.Case cs = cases.get(k);
                    byte[] r0 = results.get(0).get(k);
                    for (int r = 1; r < n; r++) {
                        assertArrayEquals(r0, results.get(r).get(k), name + ": ranks 0 and " + r + " differ for " + t
                                + " " + cs);
                    }
                    RingCollectivesTest.checkAgainstReference(n, t, cs, ByteBuffer.wrap(r0).order(ByteOrder.LITTLE_ENDIAN),
                            0, 0, cs.count());
                }
            }
        }
    }

    /**
     * A rank that crashes in a pipelined allreduce (its ring within the host and its exchange across hosts both in
     * flight on every rank) fails the op on every rank, each naming it, and nothing hangs.
     */
    @Test
    void aRankCrashingMidPipelineFailsTheOpOnEveryRankNamingIt() throws Exception {
        List<String> hosts = List.of("127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.2");
        try (TestRings c = TestRings.onHosts(hosts, "hier-crash", TransportOptions.builder().chunkBytes(64 * 1024)
                .build())) {
            c.form(1, Hierarchy.AUTO);
            c.rings.get(2).crashAfterFrames(5);
            long seq = c.nextSeq();
            int count = 2 << 20; // 8 MiB: eight segments
            List<Throwable> out = c.onAll((rank, ring) -> {
                try {
                    ring.allreduce(seq, Elements.direct(count * 4), DType.FLOAT32, count, ReduceOp.SUM, 1.0, 1.0);
                    return null;
                } catch (WorkerLostException e) {
                    return e;
                }
            }, 20);
            for (int r : new int[] {0, 1, 3}) {
                WorkerLostException e = assertInstanceOf(WorkerLostException.class, out.get(r), "rank " + r);
                assertEquals(2, e.lostRank(), "rank " + r + ": " + e.getMessage());
            }
            assertInstanceOf(WorkerLostException.class, out.get(2), "the crashed rank");
            for (GenerationDataPlane ring : c.rings) {
                assertTrue(ring.isAborted(), "rank " + ring.rank());
            }
        }
    }

    @Test
    void aFusedBatchOverSegmentsEqualsTheSameOverOneBuffer() throws Exception {
        List<String> hosts = List.of("127.0.0.1", "127.0.0.2", "127.0.0.1", "127.0.0.2");
        int[] lengths = {0, 5, 1, 30_000, 99_999, 0, 17};
        int total = IntStream.of(lengths).sum();
        DType t = DType.FLOAT32;
        try (TestRings c = TestRings.onHosts(hosts, "hier", TransportOptions.builder().chunkBytes(16 * 1024).build())) {
            c.form(1, Hierarchy.AUTO);
            long base = c.reserve(2);
            List<byte[][]> results = c.onAll((rank, ring) -> {
                ByteBuffer whole = Elements.direct(total * 4);
                ByteBuffer[] send = new ByteBuffer[lengths.length];
                ByteBuffer[] views = new ByteBuffer[lengths.length];
                int[] bytes = new int[lengths.length];
                for (int s = 0, at = 0; s < lengths.length; at += lengths[s], s++) {
                    ByteBuffer seg = Elements.direct(Math.max(1, lengths[s]) * 4);
                    for (int i = 0; i < lengths[s]; i++) {
                        double v = RingCollectivesTest.input(t, ReduceOp.SUM, rank, at + i);
                        Elements.put(t, seg, i, v);
                        Elements.put(t, whole, at + i, v);
                    }
                    send[s] = seg.duplicate().order(ByteOrder.LITTLE_ENDIAN);
                    views[s] = seg.duplicate().order(ByteOrder.LITTLE_ENDIAN);
                    bytes[s] = lengths[s] * 4;
                }
                ring.allreduce(base, whole, t, total, ReduceOp.SUM, 1.0, 1.0);
                ring.allreduce(base + 1, send, views, bytes, lengths.length, t, ReduceOp.SUM, 1.0, 1.0);
                ByteBuffer joined = Elements.direct(total * 4);
                for (int s = 0, at = 0; s < lengths.length; at += bytes[s], s++) {
                    joined.put(at, views[s].clear(), 0, bytes[s]);
                }
                return new byte[][] {Elements.bytes(whole, 0, total * 4), Elements.bytes(joined, 0, total * 4)};
            }, 60);
            for (int r = 0; r < 4; r++) {
                assertArrayEquals(results.get(r)[0], results.get(r)[1], "rank " + r + ": segments differ from one buffer");
                assertArrayEquals(results.get(0)[1], results.get(r)[1], "ranks 0 and " + r + " differ");
            }
            RingCollectivesTest.checkAgainstReference(4, t, new RingCollectivesTest.Case(ReduceOp.SUM, total, 1.0, 1.0),
                    ByteBuffer.wrap(results.get(0)[0]).order(ByteOrder.LITTLE_ENDIAN), 0, 0, total);
        }
    }

    @Test
    void noHierarchyWithinOneHostOrWithOneRankPerHostOrWhenOff() throws Exception {
        for (var layout : List.of(List.of("127.0.0.1", "127.0.0.1", "127.0.0.1"), List.of("127.0.0.1", "127.0.0.2",
                "127.0.0.3"))) {
            try (TestRings c = TestRings.onHosts(layout, "flat", TransportOptions.defaults())) {
                c.form(1, Hierarchy.AUTO);
                c.rings.forEach(r -> assertFalse(r.hierarchicalAllreduce(), layout.toString()));
            }
        }
        try (TestRings c = TestRings.onHosts(List.of("127.0.0.1", "127.0.0.1", "127.0.0.2", "127.0.0.2"), "flat",
                TransportOptions.defaults())) {
            c.form(1, Hierarchy.OFF);
            c.rings.forEach(r -> assertFalse(r.hierarchicalAllreduce()));
        }
    }
}
