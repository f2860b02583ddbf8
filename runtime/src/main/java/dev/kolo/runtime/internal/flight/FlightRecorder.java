package dev.kolo.runtime.internal.flight;

import dev.kolo.runtime.internal.control.OpSpec;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A rank's flight recorder: a ring of its last {@code capacity} collective ops, each in a slot made once, of
 * primitive fields and references to what exists already (the op's {@link OpSpec}, the data plane's constant names),
 * so that recording an op allocates nothing. The engine records an op's moments by the id {@link #submitted} gave
 * it; a slot that the ring has since reused for a newer op ignores them. Any thread records (submits come from the
 * program's threads, the rest from whichever thread drives the engine); a reader ({@link #snapshot}) copies the slots
 * without stopping them, so a record read while written may miss its last moment, never mix two ops.
 */
public final class FlightRecorder {
    /** The recorder of a worker that keeps none ({@code KOLO_FLIGHT_RECORDER=0}): every call does nothing. */
    public static final FlightRecorder OFF = new FlightRecorder(0);
    private final Slot[] slots;
    /** {@code slots.length - 1}: the length is a power of two, so that a slot is found without a division. */
    private final int mask;
    private final AtomicLong next = new AtomicLong();
    /** The newest failure's record id, or -1: the dumper writes a file for it. */
    private volatile long failure = -1;

    /**
     * One op's record; its {@code id} is written last on submit (and cleared first), publishing the rest. Release and
     * acquire, not volatile: a volatile store fences the submitting thread, twice per op, for a reader that comes
     * once in a while.
     */
    private static final class Slot {
        long id = -1;
        OpSpec spec;
        int set;
        int occurrence;
        long generation;
        long submitted;
        long agreed;
        long started;
        long finished;
        String algorithm;
        String transport;
        /** Whether {@link #algorithm} and {@link #transport} are this op's: they stay from an earlier one otherwise. */
        boolean ran;
        Throwable error;
    }

    private static final VarHandle ID;

    static {
        try {
            ID = MethodHandles.lookup().findVarHandle(Slot.class, "id", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** @param capacity how many ops the ring keeps at least (rounded up to a power of two); 0 records nothing */
    public FlightRecorder(int capacity) {
        if (capacity < 0 || capacity > 1 << 30) {
            throw new IllegalArgumentException("flight recorder capacity " + capacity + " must be 0 to 2^30");
        }
        int length = capacity <= 1 ? capacity : Integer.highestOneBit(capacity - 1) << 1;
        slots = new Slot[length];
        mask = length - 1;
        for (int i = 0; i < length; i++) {
            slots[i] = new Slot();
        }
    }

    private static long id(Slot s) {
        return (long) ID.getAcquire(s);
    }

    public boolean enabled() {
        return slots.length > 0;
    }

    public int capacity() {
        return slots.length;
    }

    /** @return how many ops were ever recorded (the next op's sequence number) */
    public long recorded() {
        return next.get();
    }

    /**
     * Records a submitted op.
     *
     * @param set        its process set's id (0: the whole job)
     * @param occurrence how many times this rank has submitted its name, this one included: the same op has the
     *                   same name and occurrence on every rank, whatever order the ranks submit in
     * @param nanos      when it was submitted ({@link System#nanoTime()})
     * @return the op's record id (this rank's sequence number), for the later moments; -1 when off
     */
    public long submitted(OpSpec spec, int set, long generation, int occurrence, long nanos) {
        if (slots.length == 0) {
            return -1;
        }
        long id = next.getAndIncrement();
        Slot s = slots[(int) id & mask];
        ID.setOpaque(s, -1L); // a reader skips the slot while it changes hands
        // A reference store into the ring (old objects) costs a GC write barrier: skip it when the slot holds the
        // same already, as it does whenever the ring's length is a multiple of the step's ops.
        if (s.spec != spec) {
            s.spec = spec;
        }
        s.set = set;
        s.generation = generation;
        s.occurrence = occurrence;
        s.submitted = nanos;
        s.agreed = 0;
        s.started = 0;
        s.finished = 0;
        s.ran = false;
        if (s.error != null) {
            s.error = null;
        }
        ID.setRelease(s, id);
        return id;
    }

    private Slot slot(long id) {
        if (id < 0 || slots.length == 0) {
            return null;
        }
        Slot s = slots[(int) id & mask];
        return id(s) == id ? s : null;
    }

    /** The ranks agreed on op {@code id} at {@code agreed}, and its data-plane work began at {@code started}. */
    public void started(long id, long agreed, long started) {
        Slot s = slot(id);
        if (s != null) {
            s.agreed = agreed;
            s.started = started;
        }
    }

    /** Op {@code id} ran with {@code algorithm} over {@code transport} (names the data plane keeps, not new text). */
    public void ran(long id, String algorithm, String transport) {
        Slot s = slot(id);
        if (s != null) {
            if (s.algorithm != algorithm) {
                s.algorithm = algorithm;
            }
            if (s.transport != transport) {
                s.transport = transport;
            }
            s.ran = true;
        }
    }

    /** Op {@code id} completed: with its result, or with {@code error} (then the dumper writes this rank's file). */
    public void finished(long id, long nanos, Throwable error) {
        Slot s = slot(id);
        if (s == null) {
            return;
        }
        if (error != null) {
            s.error = error;
        }
        s.finished = nanos;
        if (error != null) {
            failure = id;
        }
    }

    /** @return what op {@code id} failed with, or null (it did not fail, or the ring has reused its slot) */
    Throwable error(long id) {
        Slot s = slot(id);
        return s == null ? null : s.error;
    }

    /** @return the newest failed op's id, once (-1 if none since the last call) */
    long takeFailure() {
        long f = failure;
        if (f >= 0) {
            failure = -1;
        }
        return f;
    }

    /**
     * @return the record id of the oldest op still in flight that was submitted before {@code beforeNanos}, or -1
     */
    long oldestWaitingBefore(long beforeNanos) {
        long oldest = -1;
        for (Slot s : slots) {
            long id = id(s);
            if (id >= 0 && s.finished == 0 && s.submitted - beforeNanos < 0 && (oldest < 0 || id < oldest)) {
                oldest = id;
            }
        }
        return oldest;
    }

    /** @return the ops in flight now (submitted, not finished), oldest first */
    public List<FlightRecord> inFlight(FlightClock clock) {
        List<FlightRecord> all = snapshot(clock);
        all.removeIf(r -> r.done());
        return all;
    }

    /** @return the ring's records, oldest first, their times converted by {@code clock} */
    public List<FlightRecord> snapshot(FlightClock clock) {
        List<FlightRecord> records = new ArrayList<>(slots.length);
        long end = next.get();
        for (long id = Math.max(0, end - slots.length); id < end; id++) {
            Slot s = slots[(int) id & mask];
            if (id(s) != id) {
                continue; // being rewritten by a newer op
            }
            OpSpec spec = s.spec;
            long submitted = s.submitted;
            long agreed = s.agreed;
            long started = s.started;
            long finished = s.finished;
            Throwable error = s.error;
            boolean ran = s.ran;
            String algorithm = ran ? s.algorithm : null;
            String transport = ran ? s.transport : null;
            int set = s.set;
            int occurrence = s.occurrence;
            long generation = s.generation;
            if (id(s) != id || spec == null) {
                continue; // reused while read
            }
            FlightRecord.State state = finished != 0 ? (error != null ? FlightRecord.State.FAILED : FlightRecord.State.FINISHED)
                    : started != 0 ? FlightRecord.State.RUNNING : agreed != 0 ? FlightRecord.State.AGREED
                    : FlightRecord.State.SUBMITTED;
            records.add(new FlightRecord(id, spec.name, occurrence, spec.type.label(), spec.dtype.name().toLowerCase(java.util.Locale.ROOT),
                    spec.shape.clone(), spec.byteSize(), set, generation, algorithm, transport, state,
                    clock.micros(submitted), clock.micros(agreed), clock.micros(started), clock.micros(finished),
                    error == null ? null : String.valueOf(error.getMessage())));
        }
        return records;
    }
}
