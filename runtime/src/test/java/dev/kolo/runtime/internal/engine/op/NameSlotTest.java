package dev.kolo.runtime.internal.engine.op;

import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/**
 * The names in flight, one slot per name, claimed and released without allocation: a name is never in flight
 * twice, and the registry stays bounded by letting go of idle names only.
 */
class NameSlotTest {
    private final ConcurrentHashMap<String, NameSlot> names = new ConcurrentHashMap<>();

    @Test
    void aNameIsInFlightOnceAndFreeAgainWhenReleased() {
        PendingOp first = op("w");
        NameSlot slot = NameSlot.claim(names, 8, "w", first);
        assertSame(slot, first.slot);
        assertSame(first, slot.inFlight());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> NameSlot.claim(names, 8, "w", op("w")));
        assertTrue(e.getMessage().contains("already in flight"), e.getMessage());
        assertTrue(slot.release(first));
        assertTrue(!slot.release(first), "released twice");
        assertNull(slot.inFlight());
        PendingOp second = op("w");
        assertSame(slot, NameSlot.claim(names, 8, "w", second), "the name keeps its slot");
        assertSame(second, slot.inFlight());
    }

    @Test
    void manyNamesLetGoOfIdleOnesButNeverOfOneInFlight() {
        PendingOp held = op("held");
        NameSlot heldSlot = NameSlot.claim(names, 8, "held", held);
        NameSlot early = null;
        for (int i = 0; i < 100; i++) {
            PendingOp op = op("n" + i);
            NameSlot slot = NameSlot.claim(names, 8, "n" + i, op);
            if (i == 0) {
                early = slot;
            }
            assertTrue(slot.release(op));
            assertTrue(names.size() <= 9, "bounded: " + names.size());
        }
        assertSame(heldSlot, names.get("held"));
        assertSame(held, heldSlot.inFlight());
        assertThrows(IllegalArgumentException.class, () -> NameSlot.claim(names, 8, "held", op("held")));
        // A name let go of registers anew; its old slot can never be claimed again.
        assertSame(NameSlot.RETIRED, early.state);
        PendingOp again = op("n0");
        assertNotSame(early, NameSlot.claim(names, 8, "n0", again));
        assertTrue(!early.release(again));
    }

    private static PendingOp op(String name) {
        OpSpec spec = new OpSpec(name, OpType.ALLREDUCE, DType.FLOAT32, new long[] {1}, ReduceOp.SUM, 1, 1, 0, null);
        return new PendingOp(spec, null, null, null, null);
    }
}
