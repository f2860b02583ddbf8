package dev.kolo.runtime.internal.autotune;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Which setting to sample next, and which one won: a coordinate search that races each knob's values. For each
 * knob in turn ({@link Knob} order), every value is sampled once with the other knobs at the best so far; the
 * two best newcomers and the incumbent are then sampled {@link #CONFIRM_SAMPLES} more times each, interleaved, and
 * the one with the highest median score becomes the incumbent. The starting setting is always a contestant, so a
 * search started from good values keeps them unless another beats them in three samples out of three's median.
 *
 * <p>Why not Bayesian optimisation, as Horovod does: no maintained Java optimiser fits (the Gaussian processes of
 * Smile bring native BLAS into the runtime; the Java and Scala Bayesian optimisers on Maven Central are
 * unmaintained), and the space is small and nearly separable: three knobs of 5-7 values, the fusion threshold
 * moving a step's time most (docs/PERFORMANCE.md has the grid and the search's path). The race spends about 40
 * samples, the fusion threshold first; the cycle time is raced only if some tensor went through the coordinator
 * after the warm-up (a job whose steps are all cached never waits for the coordinator's cycle).
 */
final class CoordinateSearch {
    /**
     * Samples discarded at the start: a job just formed runs slower while its JVMs compile (on the 2-core machine
     * the ResNet-50-shaped step of two ranks got 1.1 GB/s in its second half-second and 2.1 GB/s by its sixth).
     */
    static final int WARM_UP_SAMPLES = 4;
    /** More samples of each finalist of a knob. */
    static final int CONFIRM_SAMPLES = 2;
    /** Newcomers that race the incumbent. */
    static final int FINALISTS = 2;

    private final Map<TunedValues, List<Double>> scores = new HashMap<>();
    private final ArrayDeque<TunedValues> queue = new ArrayDeque<>();
    private TunedValues best;
    private int knob;
    private boolean confirming;
    private int warmUp = WARM_UP_SAMPLES;
    private int samples;
    private boolean coordinated;
    private boolean cycleSkipped;

    CoordinateSearch(TunedValues start) {
        best = start;
        for (int i = 0; i < WARM_UP_SAMPLES; i++) {
            queue.add(start);
        }
        explore();
    }

    /** @return the setting to sample now; the best found once {@link #done()} */
    TunedValues current() {
        TunedValues next = queue.peek();
        return next == null ? best : next;
    }

    /** @return whether every knob has been raced */
    boolean done() {
        return queue.isEmpty();
    }

    /** @return the best setting so far */
    TunedValues best() {
        return best;
    }

    /** @return the knob being tuned, or null when done */
    Knob knob() {
        return done() ? null : Knob.values()[knob];
    }

    /** @return whether the sample now taken is a warm-up one, discarded */
    boolean warmingUp() {
        return warmUp > 0;
    }

    /** The sample of {@link #current()} scored {@code score} (higher is better). */
    void record(double score) {
        record(score, true);
    }

    /**
     * @param coordinated whether the coordinator answered a request during the sample: a search that never saw
     *        it do so after the warm-up leaves the cycle time alone, which then cannot move a step's time
     */
    void record(double score, boolean coordinated) {
        TunedValues point = queue.poll();
        if (point == null) {
            return;
        }
        samples++;
        if (warmUp > 0) {
            warmUp--;
        } else {
            scores.computeIfAbsent(point, p -> new ArrayList<>()).add(score);
            this.coordinated |= coordinated;
        }
        if (queue.isEmpty()) {
            advance();
        }
    }

    /** @return the samples recorded, warm-up included */
    int samples() {
        return samples;
    }

    private void advance() {
        Knob k = Knob.values()[knob];
        List<TunedValues> contestants = contestants(k);
        if (!confirming) {
            confirming = true;
            List<TunedValues> finalists = new ArrayList<>();
            finalists.add(best);
            contestants.stream().filter(p -> !p.equals(best)).sorted(Comparator.comparingDouble(this::median).reversed())
                    .limit(FINALISTS).forEach(finalists::add);
            for (int r = 0; r < CONFIRM_SAMPLES; r++) {
                queue.addAll(finalists);
            }
            return;
        }
        for (TunedValues p : contestants) {
            if (scores.getOrDefault(p, List.of()).size() > CONFIRM_SAMPLES - 1 && median(p) > median(best)) {
                best = p;
            }
        }
        confirming = false;
        knob++;
        if (knob < Knob.values().length && Knob.values()[knob] == Knob.CYCLE_TIME && !coordinated) {
            cycleSkipped = true; // every tensor was agreed among the ranks: the coordinator never batched one
            knob++;
        }
        if (knob < Knob.values().length) {
            explore();
        }
    }

    /** @return whether the cycle time was left alone (no tensor went through the coordinator after warm-up) */
    boolean cycleSkipped() {
        return cycleSkipped;
    }

    /** Queues every value of the current knob with the others at the best so far. */
    private void explore() {
        Knob k = Knob.values()[knob];
        List<Integer> values = new ArrayList<>(k.candidates);
        if (!values.contains(best.get(k))) {
            values.add(best.get(k));
        }
        for (int v : values) {
            queue.add(best.with(k, v));
        }
    }

    private List<TunedValues> contestants(Knob k) {
        List<TunedValues> out = new ArrayList<>();
        for (TunedValues p : scores.keySet()) {
            if (p.with(k, best.get(k)).equals(best)) {
                out.add(p);
            }
        }
        return out;
    }

    /** @return the median of the point's scores, 0 when it has none */
    double median(TunedValues p) {
        List<Double> s = scores.get(p);
        if (s == null || s.isEmpty()) {
            return 0;
        }
        double[] sorted = s.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(sorted);
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    }
}
