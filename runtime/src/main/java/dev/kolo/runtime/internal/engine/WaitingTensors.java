package dev.kolo.runtime.internal.engine;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * The cached tensors this rank waits for in agreement rounds, and what its next round message says about them:
 * the cache ids ready here (one bit per id, as the message carries them) and the ids every rank must drop. Kept
 * in submission order, because the oldest is the first due to go to the coordinator.
 */
final class WaitingTensors {
    private final LinkedHashMap<Integer, PendingOp> waiting = new LinkedHashMap<>();
    private long[] ready = new long[1];
    private final BitSet invalid = new BitSet();

    boolean waitsFor(int id) {
        return waiting.containsKey(id);
    }

    /** {@code op} waits under cache id {@code id}: the next round says it is ready here. */
    void add(int id, PendingOp op) {
        waiting.put(id, op);
        setReady(id, true);
    }

    /** @return the op waiting under {@code id}, or null */
    PendingOp get(int id) {
        return waiting.get(id);
    }

    /** Stops waiting for {@code id} (it runs, or goes to the coordinator). @return its op, or null if none waited */
    PendingOp take(int id) {
        PendingOp op = waiting.remove(id);
        if (op != null) {
            setReady(id, false);
        }
        return op;
    }

    boolean isEmpty() {
        return waiting.isEmpty();
    }

    /** @return when the oldest waiting op was submitted; only when not {@link #isEmpty} */
    long oldestSubmitNanos() {
        return waiting.values().iterator().next().submitNanos;
    }

    /** @return the waiting ops, oldest first, in a copy the caller may change the set under */
    List<PendingOp> ops() {
        return new ArrayList<>(waiting.values());
    }

    /** Every rank must drop cache entry {@code id}: the next round says so. */
    void invalidate(int id) {
        invalid.set(id);
    }

    /**
     * Marks the entries of the ops that have waited {@code after} nanoseconds invalid: they go to the
     * coordinator, whose stall inspector sees them.
     */
    void invalidateOverdue(long now, long after) {
        for (PendingOp op : waiting.values()) {
            if (now - op.submitNanos < after) {
                break;
            }
            invalid.set(op.cacheId);
        }
    }

    /** @return word {@code w} of the ready bits (0 past the highest id ever ready) */
    long readyWord(int w) {
        return w < ready.length ? ready[w] : 0;
    }

    /** @return the invalid bits as words; {@link #clearInvalid} once they are in a round message */
    long[] invalidWords() {
        return invalid.toLongArray();
    }

    void clearInvalid() {
        invalid.clear();
    }

    /** The generation ended: nothing waits, nothing is to be said. */
    void clear() {
        waiting.clear();
        Arrays.fill(ready, 0);
        invalid.clear();
    }

    private void setReady(int id, boolean on) {
        int w = id >>> 6;
        if (ready.length < w + 1) {
            ready = Arrays.copyOf(ready, Math.max(w + 1, 2 * ready.length));
        }
        if (on) {
            ready[w] |= 1L << id;
        } else {
            ready[w] &= ~(1L << id);
        }
    }
}
