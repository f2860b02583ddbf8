package dev.kolo.runtime.internal.engine.agree;

import dev.kolo.runtime.internal.autotune.Autotuner;
import dev.kolo.runtime.internal.autotune.TunedValues;
import dev.kolo.runtime.internal.engine.execute.BatchKnobs;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The tuned knobs of one generation on this rank: the values in force (numbered: version 0 is the job's settings,
 * on every rank at the start of every generation) and, on the rank that tunes (rank 0 of the job with
 * {@code KOLO_AUTOTUNE}), the next values to try. New values travel in the agreement round's header: every rank
 * sends the values it runs with and their version, rank 0 the next values with the next version, the round keeps
 * the highest version, and every rank takes it as the round ends, before it runs the round's ops. So every rank
 * changes at the same round, and the eager data and fused batches of a round are decided by the same values
 * everywhere. Guarded by the engine lock.
 */
public final class Tuning implements BatchKnobs {
    /** Most changes kept in the worker's history (the search makes about 40). */
    static final int HISTORY = 256;

    private final Autotuner tuner;
    private final AtomicLong cycleNanos;
    private TunedValues values;
    private int version;
    private TunedValues proposal;
    private final List<String> history;
    private long windowStart;
    private long windowBytes;
    private int windowSteps;
    private boolean windowCoordinated;

    /**
     * @param start the job's settings
     * @param tuner rank 0's tuner when this rank tunes, else null
     * @param cycleNanos where the coordinator of this worker reads its cycle time, or null (a process set's)
     * @param history the worker's record of changes (kept across generations), or null
     */
    public Tuning(TunedValues start, Autotuner tuner, AtomicLong cycleNanos, List<String> history) {
        this.values = start;
        this.tuner = tuner;
        this.cycleNanos = cycleNanos;
        this.history = history;
        if (cycleNanos != null) {
            cycleNanos.set(start.cycleMicros() * 1000L);
        }
        if (tuner != null && !tuner.current().equals(start)) {
            proposal = tuner.current(); // the search goes on from where a regroup interrupted it
        }
        windowStart = System.nanoTime();
    }

    /** @return the values in force */
    TunedValues values() {
        return values;
    }

    /** @return the version of the values in force */
    int version() {
        return version;
    }

    /** @return the version this rank writes in its round message */
    int versionToSend() {
        return proposal != null ? version + 1 : version;
    }

    /** @return the values this rank writes in its round message */
    TunedValues valuesToSend() {
        return proposal != null ? proposal : values;
    }

    /** The round ended with {@code v}, numbered {@code newVersion}: from now on they are in force. */
    void roundEnded(int newVersion, TunedValues v, long round, long now) {
        if (newVersion <= version) {
            return;
        }
        version = newVersion;
        values = v;
        proposal = null;
        if (cycleNanos != null) {
            cycleNanos.set(v.cycleMicros() * 1000L);
        }
        if (history != null) {
            synchronized (history) {
                if (history.size() < HISTORY) {
                    history.add("round " + round + ": " + v);
                }
            }
        }
        startWindow(now);
    }

    @Override
    public int fusionThreshold() {
        return values.fusionThreshold();
    }

    /** Collectives of {@code bytes} completed on this rank. */
    @Override
    public void completed(long bytes) {
        windowBytes += bytes;
    }

    /** A coordinator response ran (the cycle time had a part in it). */
    void coordinated() {
        windowCoordinated = true;
    }

    /**
     * This rank has nothing in flight (a step has ended): on the tuning rank, a sample that has run long enough
     * ({@link Autotuner#SAMPLE_STEPS} steps and {@link Autotuner#SAMPLE_NANOS}) ends, and the next values are
     * proposed for the next round.
     */
    void idle(long now) {
        if (tuner == null || proposal != null || tuner.done() || windowBytes == 0) {
            return;
        }
        windowSteps++;
        if (windowSteps < Autotuner.SAMPLE_STEPS || now - windowStart < Autotuner.SAMPLE_NANOS) {
            return;
        }
        TunedValues next = tuner.sampled(values, windowBytes, now - windowStart, windowCoordinated);
        startWindow(now);
        if (!next.equals(values)) {
            proposal = next;
        }
    }

    private void startWindow(long now) {
        windowStart = now;
        windowBytes = 0;
        windowSteps = 0;
        windowCoordinated = false;
    }

    /** @return whether this rank tunes */
    boolean tuning() {
        return tuner != null;
    }

    /** For tests and logs: what changed, where. */
    public static List<String> copy(List<String> history) {
        synchronized (history) {
            return new ArrayList<>(history);
        }
    }
}
