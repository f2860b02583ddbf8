package dev.kolo.runtime.internal.engine.agree;

import dev.kolo.runtime.internal.engine.op.PendingOp;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The cached tensors this rank waits for in agreement rounds, and what its next round message says about them:
 * the cache ids ready here (one bit per id, as the message carries them) and the ids every rank must drop. Kept
 * in submission order, because the oldest is the first due to go to the coordinator: a list linked through the
 * ops' own fields, and the ops by id in an array, so that a cached op waits without an allocation.
 */
final class WaitingTensors {
    /** The op waiting under each id, or null. */
    private PendingOp[] byId = new PendingOp[64];
    /** The ops in the order they began to wait ({@link PendingOp#waitingAfter} leads to the newer). */
    private PendingOp oldest;
    private PendingOp newest;
    private long[] ready = new long[1];
    private long[] invalid = new long[1];

    boolean waitsFor(int id) {
        return get(id) != null;
    }

    /** {@code op} waits under cache id {@code id} (where none waits): the next round says it is ready here. */
    void add(int id, PendingOp op) {
        if (id >= byId.length) {
            byId = Arrays.copyOf(byId, Math.max(id + 1, 2 * byId.length));
        }
        byId[id] = op;
        op.waitingBefore = newest;
        op.waitingAfter = null;
        if (newest == null) {
            oldest = op;
        } else {
            newest.waitingAfter = op;
        }
        newest = op;
        setReady(id, true);
    }

    /** @return the op waiting under {@code id}, or null */
    PendingOp get(int id) {
        return id >= 0 && id < byId.length ? byId[id] : null;
    }

    /** Stops waiting for {@code id} (it runs, or goes to the coordinator). @return its op, or null if none waited */
    PendingOp take(int id) {
        PendingOp op = get(id);
        if (op != null) {
            byId[id] = null;
            unlink(op);
            setReady(id, false);
        }
        return op;
    }

    private void unlink(PendingOp op) {
        PendingOp before = op.waitingBefore;
        PendingOp after = op.waitingAfter;
        if (before == null) {
            oldest = after;
        } else {
            before.waitingAfter = after;
        }
        if (after == null) {
            newest = before;
        } else {
            after.waitingBefore = before;
        }
        op.waitingBefore = null;
        op.waitingAfter = null;
    }

    boolean isEmpty() {
        return oldest == null;
    }

    /** @return when the oldest waiting op was submitted; only when not {@link #isEmpty} */
    long oldestSubmitNanos() {
        return oldest.submitNanos;
    }

    /** @return the waiting ops, oldest first, in a copy the caller may change the set under */
    List<PendingOp> ops() {
        List<PendingOp> ops = new ArrayList<>();
        for (PendingOp op = oldest; op != null; op = op.waitingAfter) {
            ops.add(op);
        }
        return ops;
    }

    /** Every rank must drop cache entry {@code id}: the next round says so. */
    void invalidate(int id) {
        invalid = setBit(invalid, id, true);
    }

    /**
     * Marks the entries of the ops that have waited {@code after} nanoseconds invalid: they go to the
     * coordinator, whose stall inspector sees them.
     */
    void invalidateOverdue(long now, long after) {
        for (PendingOp op = oldest; op != null; op = op.waitingAfter) {
            if (now - op.submitNanos < after) {
                break;
            }
            invalid = setBit(invalid, op.cacheId, true);
        }
    }

    /** @return word {@code w} of the ready bits (0 past the highest id ever ready) */
    long readyWord(int w) {
        return w < ready.length ? ready[w] : 0;
    }

    /** @return word {@code w} of the invalid bits; {@link #clearInvalid} once they are in a round message */
    long invalidWord(int w) {
        return w < invalid.length ? invalid[w] : 0;
    }

    void clearInvalid() {
        Arrays.fill(invalid, 0);
    }

    /** The generation ended: nothing waits, nothing is to be said. */
    void clear() {
        for (PendingOp op = oldest, next; op != null; op = next) {
            next = op.waitingAfter;
            op.waitingBefore = null;
            op.waitingAfter = null;
        }
        Arrays.fill(byId, null);
        oldest = null;
        newest = null;
        Arrays.fill(ready, 0);
        Arrays.fill(invalid, 0);
    }

    private void setReady(int id, boolean on) {
        ready = setBit(ready, id, on);
    }

    /** @return {@code bits} (or a longer copy) with bit {@code id} set or cleared */
    private static long[] setBit(long[] bits, int id, boolean on) {
        int w = id >>> 6;
        if (bits.length < w + 1) {
            bits = Arrays.copyOf(bits, Math.max(w + 1, 2 * bits.length));
        }
        if (on) {
            bits[w] |= 1L << id;
        } else {
            bits[w] &= ~(1L << id);
        }
        return bits;
    }
}
