package dev.kolo.runtime.internal.engine.op;

import dev.kolo.runtime.internal.control.OpSpec;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A name's registration: the op in flight under it (null when idle; {@link #RETIRED} once let go, after which
 * a submit of the name registers it anew), and the spec last submitted under it. Created once per name.
 */
public final class NameSlot {
    public static final Object RETIRED = new Object();
    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(NameSlot.class, "state", Object.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    volatile Object state;
    public volatile OpSpec lastSpec;
    /**
     * How many ops were submitted under the name while this slot held it: the flight recorder's occurrence, which
     * names the same op on every rank. Written by the submitting thread only, while it holds the name.
     */
    public int submits;

    /**
     * Registers {@code op} under its name in {@code names}, which keeps at most about {@code kept} names.
     *
     * @throws IllegalArgumentException if an op of that name is in flight
     */
    public static NameSlot claim(ConcurrentHashMap<String, NameSlot> names, int kept, String name, PendingOp op) {
        for (;;) {
            NameSlot slot = names.get(name);
            if (slot == null) {
                if (names.size() >= kept) {
                    retireIdle(names, kept / 2);
                }
                slot = names.computeIfAbsent(name, n -> new NameSlot());
            }
            Object state = slot.state;
            if (state == RETIRED) {
                continue; // let go meanwhile: the name gets a new slot
            }
            if (state != null) {
                throw new IllegalArgumentException("tensor name '" + name + "' is already in flight on this "
                        + "rank; wait for that op to complete or use another name");
            }
            if (slot.compareAndSet(null, op)) {
                op.slot = slot;
                return slot;
            }
        }
    }

    /** Lets go of idle names until {@code left} remain (a name in flight keeps its slot). */
    public static void retireIdle(ConcurrentHashMap<String, NameSlot> names, int left) {
        for (var it = names.entrySet().iterator(); it.hasNext() && names.size() > left; ) {
            var e = it.next();
            NameSlot slot = e.getValue();
            if (slot.compareAndSet(null, RETIRED)) {
                names.remove(e.getKey(), slot);
            }
        }
    }

    boolean compareAndSet(Object expected, Object next) {
        return STATE.compareAndSet(this, expected, next);
    }

    /** @return whether {@code op} was in flight here and is no longer */
    public boolean release(PendingOp op) {
        return compareAndSet(op, null);
    }

    /** @return the op in flight here, or null */
    public PendingOp inFlight() {
        return state instanceof PendingOp op ? op : null;
    }
}
