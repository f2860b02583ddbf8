package dev.kolo.runtime.internal.engine.agree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;
import dev.kolo.runtime.internal.engine.op.PendingOp;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The waiting ops, linked through their own fields: by id, in the order they began to wait, and their bits. */
class WaitingTensorsTest {

    @Test
    void keepsTheOrderOpsBeganToWaitInAsOpsLeaveFromAnywhere() {
        WaitingTensors w = new WaitingTensors();
        PendingOp a = op("a");
        PendingOp b = op("b");
        PendingOp c = op("c");
        PendingOp d = op("d");
        w.add(5, a);
        w.add(130, b); // past the first words: the arrays grow
        w.add(0, c);
        w.add(64, d);
        assertEquals(List.of(a, b, c, d), w.ops());
        assertEquals(1L << 5 | 1L, w.readyWord(0));
        assertEquals(1L, w.readyWord(1));
        assertEquals(1L << 2, w.readyWord(2));
        assertSame(b, w.take(130));
        assertNull(w.take(130));
        assertFalse(w.waitsFor(130));
        assertEquals(0L, w.readyWord(2));
        assertEquals(List.of(a, c, d), w.ops());
        assertSame(a, w.take(5)); // the oldest
        assertEquals(c.submitNanos, w.oldestSubmitNanos());
        assertSame(d, w.take(64)); // the newest
        assertEquals(List.of(c), w.ops());
        w.add(64, b);
        assertEquals(List.of(c, b), w.ops());
        assertSame(b, w.get(64));
        assertTrue(w.waitsFor(0));
        assertSame(c, w.take(0));
        assertSame(b, w.take(64));
        assertTrue(w.isEmpty());
        assertEquals(List.of(), w.ops());
    }

    @Test
    void invalidBitsLastUntilCleared() {
        WaitingTensors w = new WaitingTensors();
        w.invalidate(3);
        w.invalidate(200);
        assertEquals(1L << 3, w.invalidWord(0));
        assertEquals(1L << (200 - 192), w.invalidWord(3));
        assertEquals(0L, w.invalidWord(99));
        w.clearInvalid();
        assertEquals(0L, w.invalidWord(0));
        assertEquals(0L, w.invalidWord(3));
        PendingOp a = op("a");
        a.cacheId = 7;
        w.add(7, a);
        w.invalidateOverdue(a.submitNanos + 10, 5); // waited past the bound
        assertEquals(1L << 7, w.invalidWord(0));
        w.clear();
        assertTrue(w.isEmpty());
        assertNull(w.get(7));
        assertEquals(0L, w.readyWord(0));
        assertEquals(0L, w.invalidWord(0));
    }

    private static PendingOp op(String name) {
        OpSpec spec = new OpSpec(name, OpType.ALLREDUCE, DType.FLOAT32, new long[] {1}, ReduceOp.SUM, 1, 1, 0, null);
        return new PendingOp(spec, null, null, null, null);
    }
}
