package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.internal.control.ControlMessage;
import dev.kolo.runtime.internal.control.ControlMessage.ErrorKind;
import dev.kolo.runtime.internal.control.ControlMessage.JoinResponse;
import dev.kolo.runtime.internal.control.ControlMessage.OpResponse;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;
import dev.kolo.runtime.internal.negotiation.Negotiator;
import java.util.List;
import org.junit.jupiter.api.Test;

class NegotiatorTest {

    private static OpSpec allreduce(String name, DType dtype, long... shape) {
        return new OpSpec(name, OpType.ALLREDUCE, dtype, shape, ReduceOp.SUM, 1, 1, 0, null);
    }

    private static OpResponse only(List<ControlMessage> out) {
        assertEquals(1, out.size(), "responses: " + out);
        return (OpResponse) out.get(0);
    }

    @Test
    void readyOnlyWhenEveryRankAsked() {
        Negotiator n = new Negotiator(3, 1, 0);
        n.onRequest(0, allreduce("g", DType.FLOAT32, 4), 0);
        n.onRequest(2, allreduce("g", DType.FLOAT32, 4), 0);
        assertTrue(n.drain().isEmpty());
        n.onRequest(1, allreduce("g", DType.FLOAT32, 4), 0);
        OpResponse r = only(n.drain());
        assertEquals(0, r.sequence());
        assertFalse(r.failed());
        assertEquals("g", r.entries().get(0).name());
    }

    @Test
    void mismatchNamesTensorAttributeAndRanks() {
        Negotiator n = new Negotiator(3, 1, 0);
        n.onRequest(0, allreduce("w", DType.FLOAT32, 3, 4), 0);
        n.onRequest(1, allreduce("w", DType.FLOAT32, 4, 3), 0);
        n.onRequest(2, allreduce("w", DType.FLOAT32, 3, 4), 0);
        OpResponse r = only(n.drain());
        assertEquals(ErrorKind.MISMATCH, r.errorKind());
        assertEquals("allreduce 'w': shape differs between ranks: ranks 0, 2 have [3, 4]; rank 1 has [4, 3]. "
                + "Submit the same shape on every rank", r.error());
        // The next op still works.
        for (int rank = 0; rank < 3; rank++) {
            n.onRequest(rank, allreduce("w", DType.FLOAT32, 3, 4), 0);
        }
        assertFalse(only(n.drain()).failed());
    }

    @Test
    void dtypeOpScaleAndRootMismatchesAreCaught() {
        Negotiator n = new Negotiator(2, 1, 0);
        n.onRequest(0, allreduce("a", DType.FLOAT32, 2), 0);
        n.onRequest(1, allreduce("a", DType.FLOAT64, 2), 0);
        assertTrue(only(n.drain()).error().contains("dtype differs"));
        n.onRequest(0, new OpSpec("b", OpType.ALLREDUCE, DType.INT32, new long[] {2}, ReduceOp.MIN, 1, 1, 0, null), 0);
        n.onRequest(1, new OpSpec("b", OpType.ALLREDUCE, DType.INT32, new long[] {2}, ReduceOp.MAX, 1, 1, 0, null), 0);
        assertTrue(only(n.drain()).error().contains("reduce op differs"));
        n.onRequest(0, new OpSpec("c", OpType.ALLREDUCE, DType.INT32, new long[] {2}, ReduceOp.SUM, 2, 1, 0, null), 0);
        n.onRequest(1, new OpSpec("c", OpType.ALLREDUCE, DType.INT32, new long[] {2}, ReduceOp.SUM, 1, 1, 0, null), 0);
        assertTrue(only(n.drain()).error().contains("prescale differs"));
        n.onRequest(0, new OpSpec("d", OpType.BROADCAST, DType.INT32, new long[] {2}, ReduceOp.SUM, 1, 1, 0, null), 0);
        n.onRequest(1, new OpSpec("d", OpType.BROADCAST, DType.INT32, new long[] {2}, ReduceOp.SUM, 1, 1, 1, null), 0);
        assertTrue(only(n.drain()).error().contains("root rank differs"));
        n.onRequest(0, new OpSpec("e", OpType.BROADCAST, DType.INT32, new long[] {2}, ReduceOp.SUM, 1, 1, 0, null), 0);
        n.onRequest(1, allreduce("e", DType.INT32, 2), 0);
        assertTrue(only(n.drain()).error().contains("op type differs"));
    }

    @Test
    void allgatherMayDifferInDimZeroOnly() {
        Negotiator n = new Negotiator(2, 1, 0);
        n.onRequest(0, new OpSpec("g", OpType.ALLGATHER, DType.FLOAT32, new long[] {17, 3}, ReduceOp.SUM, 1, 1, 0, null), 0);
        n.onRequest(1, new OpSpec("g", OpType.ALLGATHER, DType.FLOAT32, new long[] {32, 3}, ReduceOp.SUM, 1, 1, 0, null), 0);
        OpResponse r = only(n.drain());
        assertFalse(r.failed());
        assertEquals(List.of(17L, 32L), java.util.Arrays.stream(r.entries().get(0).perRank()).boxed().toList());
        n.onRequest(0, new OpSpec("h", OpType.ALLGATHER, DType.FLOAT32, new long[] {1, 3}, ReduceOp.SUM, 1, 1, 0, null), 0);
        n.onRequest(1, new OpSpec("h", OpType.ALLGATHER, DType.FLOAT32, new long[] {1, 4}, ReduceOp.SUM, 1, 1, 0, null), 0);
        assertTrue(only(n.drain()).error().contains("shape (beyond dim 0) differs"));
    }

    @Test
    void readyAllreducesFuseUpToTheThreshold() {
        Negotiator n = new Negotiator(2, 1, 100);
        // Both ranks submit a burst before the coordinator drains: 3 x 40 bytes with a 100-byte threshold.
        for (String name : List.of("a", "b", "c")) {
            n.onRequest(0, allreduce(name, DType.FLOAT32, 10), 0);
            n.onRequest(1, allreduce(name, DType.FLOAT32, 10), 0);
        }
        n.onRequest(0, allreduce("d", DType.FLOAT64, 1), 0);
        n.onRequest(1, allreduce("d", DType.FLOAT64, 1), 0);
        List<ControlMessage> out = n.drain();
        assertEquals(3, out.size());
        assertEquals(List.of("a", "b"), ((OpResponse) out.get(0)).entries().stream().map(e -> e.name()).toList());
        // A different dtype never fuses with float32, but it may go before the next float32 batch.
        assertEquals(List.of("c"), ((OpResponse) out.get(1)).entries().stream().map(e -> e.name()).toList());
        assertEquals(List.of("d"), ((OpResponse) out.get(2)).entries().stream().map(e -> e.name()).toList());
        Negotiator off = new Negotiator(2, 1, 0);
        for (String name : List.of("a", "b")) {
            off.onRequest(0, allreduce(name, DType.FLOAT32, 10), 0);
            off.onRequest(1, allreduce(name, DType.FLOAT32, 10), 0);
        }
        assertEquals(2, off.drain().size(), "threshold 0 disables fusion");
    }

    @Test
    void responsesSayWhichSpecsTheRanksMayCache() {
        Negotiator n = new Negotiator(2, 1, 0);
        OpSpec a = allreduce("a", DType.FLOAT32, 8);
        n.onRequest(0, a, 0);
        n.onRequest(1, a, 0);
        OpResponse first = only(n.drain());
        assertTrue(first.entries().get(0).cacheable(), "every rank sent the same spec: cacheable");
        assertEquals(a, first.entries().get(0).spec(), "every response carries the agreed spec");
        n.onRequest(0, new OpSpec("g", OpType.ALLGATHER, DType.FLOAT32, new long[] {2, 3}, ReduceOp.SUM, 1, 1, 0, null), 0);
        n.onRequest(1, new OpSpec("g", OpType.ALLGATHER, DType.FLOAT32, new long[] {5, 3}, ReduceOp.SUM, 1, 1, 0, null), 0);
        assertFalse(only(n.drain()).entries().get(0).cacheable(), "dim 0 differs between ranks: not cacheable");
        n.onRequest(0, alltoall("t", 4, 2, 2), 0);
        n.onRequest(1, alltoall("t", 4, 2, 2), 0);
        assertFalse(only(n.drain()).entries().get(0).cacheable(), "alltoall splits are each rank's own");
    }

    @Test
    void joinedRanksCountForAllreduceAndFailOthers() {
        Negotiator n = new Negotiator(3, 1, 0);
        n.onJoin(2);
        n.onRequest(0, allreduce("g", DType.FLOAT32, 4), 0);
        n.onRequest(1, allreduce("g", DType.FLOAT32, 4), 0);
        assertFalse(only(n.drain()).failed());
        n.onRequest(0, new OpSpec("x", OpType.ALLGATHER, DType.FLOAT32, new long[] {1}, ReduceOp.SUM, 1, 1, 0, null), 0);
        n.onRequest(1, new OpSpec("x", OpType.ALLGATHER, DType.FLOAT32, new long[] {1}, ReduceOp.SUM, 1, 1, 0, null), 0);
        OpResponse r = only(n.drain());
        assertEquals(ErrorKind.INVALID, r.errorKind());
        assertTrue(r.error().contains("cannot run while ranks [2] have joined"), r.error());
        n.onJoin(0);
        assertTrue(n.drain().isEmpty());
        n.onJoin(1);
        JoinResponse j = (JoinResponse) n.drain().get(0);
        assertEquals(1, j.lastRank());
    }

    private static OpSpec member(String group, int index, int size, long elements) {
        return new OpSpec(group + "/" + index, OpType.ALLREDUCE, DType.FLOAT32, new long[] {elements}, ReduceOp.SUM,
                1, 1, 0, null, size);
    }

    @Test
    void aGroupRunsAsOneOnceEveryMemberIsReadyEverywhere() {
        Negotiator n = new Negotiator(2, 1, 1 << 20);
        // Member 0 is ready on both ranks long before member 1 reaches the coordinator: it must wait.
        n.onRequest(0, member("pair", 0, 2, 10), 0);
        n.onRequest(1, member("pair", 0, 2, 10), 0);
        n.onRequest(0, allreduce("lone", DType.FLOAT64, 1), 0);
        n.onRequest(1, allreduce("lone", DType.FLOAT64, 1), 0);
        OpResponse lone = only(n.drain());
        assertEquals(List.of("lone"), lone.entries().stream().map(e -> e.name()).toList(), "others are not held up");
        n.onRequest(1, member("pair", 1, 2, 1), 0);
        assertTrue(n.drain().isEmpty(), "member 1 is not ready on rank 0 yet");
        n.onRequest(0, member("pair", 1, 2, 1), 0);
        OpResponse pair = only(n.drain());
        assertEquals(List.of("pair/0", "pair/1"), pair.entries().stream().map(e -> e.name()).toList(),
                "one fused response, in member order");
    }

    @Test
    void aGroupThatNeverCompletesFailsWithItsStalledMember() {
        Negotiator n = new Negotiator(2, 1, 1 << 20);
        n.onRequest(0, member("g", 0, 2, 4), 0);
        n.onRequest(1, member("g", 0, 2, 4), 0);
        n.onRequest(0, member("g", 1, 2, 4), 0);
        assertTrue(n.drain().isEmpty());
        n.failStalled(3_000_000_000L, 2_000_000_000L);
        List<ControlMessage> out = n.drain();
        assertEquals(2, out.size(), "the stalled member and the member held for it: " + out);
        for (ControlMessage m : out) {
            assertEquals(ErrorKind.STALLED, ((OpResponse) m).errorKind());
        }
        assertTrue(((OpResponse) out.get(1)).error().contains("group 'g' stalled: only 1 of its 2"), out.toString());
    }

    @Test
    void groupMembersMustBeNamedByIndex() {
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> member("g", 2, 2, 1));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> new OpSpec("g", OpType.ALLREDUCE, DType.FLOAT32, new long[] {1}, ReduceOp.SUM, 1, 1, 0, null, 2));
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class, () -> member("g", 0, 1, 1));
        assertEquals("a/b", member("a/b", 1, 3, 1).groupName());
    }

    @Test
    void stallsNameTheMissingRanksAndCanFailTheOp() {
        Negotiator n = new Negotiator(3, 1, 0);
        n.onRequest(0, allreduce("slow", DType.FLOAT32, 1), 0);
        n.onRequest(2, allreduce("slow", DType.FLOAT32, 1), 0);
        assertTrue(n.stalls(1_000_000_000L, 2_000_000_000L).isEmpty());
        Negotiator.Stall s = n.stalls(3_000_000_000L, 2_000_000_000L).get(0);
        assertEquals("slow", s.name());
        assertEquals(List.of(1), s.missingRanks());
        n.failStalled(3_000_000_000L, 2_000_000_000L);
        OpResponse r = only(n.drain());
        assertEquals(ErrorKind.STALLED, r.errorKind());
        assertTrue(r.error().contains("ranks [1] did not submit it"), r.error());
        assertEquals(0, n.pendingCount());
    }

    private static OpSpec alltoall(String name, long rows, long... splits) {
        return new OpSpec(name, OpType.ALLTOALL, DType.FLOAT32, new long[] {rows, 2}, ReduceOp.SUM, 1, 1, 0, splits);
    }

    @Test
    void requestsFromTheWireThatDoNotFitTheJobAreInvalidNotACrash() {
        // The API checks splits and roots on submit; a forged request must not break negotiation either.
        Negotiator n = new Negotiator(2, 1, 0);
        n.onRequest(0, alltoall("x", 4, 2, 2), 0);
        n.onRequest(1, alltoall("x", 4, 4), 0); // one split for two ranks
        OpResponse r = only(n.drain());
        assertEquals(ErrorKind.INVALID, r.errorKind());
        assertTrue(r.error().contains("rank 1 sent 1 splits for 2 ranks"), r.error());
        n.onRequest(0, alltoall("y", 4, 2, 2), 0);
        n.onRequest(1, alltoall("y", 4, 1, 1), 0); // splits that do not add up to the rows
        assertTrue(only(n.drain()).error().contains("rank 1's splits add up to 2 but it has 4 rows"));
        for (int rank = 0; rank < 2; rank++) {
            n.onRequest(rank, new OpSpec("b", OpType.BROADCAST, DType.FLOAT32, new long[] {3}, ReduceOp.SUM, 1, 1, 5,
                    null), 0);
        }
        assertTrue(only(n.drain()).error().contains("root rank 5 is not a rank of this job"));
        n.onRequest(7, allreduce("z", DType.FLOAT32, 1), 0); // not a rank of this generation: dropped
        assertEquals(0, n.pendingCount());
        for (int rank = 0; rank < 2; rank++) {
            n.onRequest(rank, alltoall("ok", 4, 2, 2), 0);
        }
        assertFalse(only(n.drain()).failed());
    }
    /**
     * A program that names its tensors by step ("fresh." + step): 20000 names, each asked by both ranks with the
     * count of responses each holds, as the ranks' requests carry it. The names the negotiator remembers as
     * answered (to recognise re-sent copies) stay those answered since the ranks' last requests, not every name;
     * a copy re-sent before its answer arrived is still recognised.
     */
    @Test
    void remembersOnlyTheAnswersSomeRankMayNotHoldYet() {
        Negotiator n = new Negotiator(2, 1, 0);
        long sent = 0; // responses sent so far: each rank holds all but the newest when it asks for the next name
        int most = 0;
        for (int step = 0; step < 20_000; step++) {
            OpSpec spec = allreduce("fresh." + step, DType.FLOAT32, 4);
            long held = Math.max(0, sent - 1);
            assertTrue(n.onRequest(0, spec, step, held));
            assertTrue(n.onRequest(1, spec, step, held));
            sent += n.drain().size();
            most = Math.max(most, n.answeredCount());
            // Rank 1 re-sends its request of the last step's name before it holds the answer: a copy.
            if (step > 0) {
                assertFalse(n.onRequest(1, allreduce("fresh." + (step - 1), DType.FLOAT32, 4), step, held),
                        "a re-sent copy of an answered request counted anew at step " + step);
            }
        }
        assertEquals(20_000, sent, "every name was answered");
        assertTrue(most <= 3, "the negotiator remembered up to " + most + " answered names");
        assertEquals(0, n.pendingCount());
    }
}
