package dev.kolo.elastic.data;

import dev.kolo.elastic.ElasticState;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.Tensor;
import dev.kolo.runtime.internal.access.ProgressNotes;
import dev.kolo.runtime.internal.access.WorkerRegistry;
import io.micrometer.core.instrument.Gauge;
import java.util.Arrays;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Measures how fast this rank trains and, once a window of steps, compares the ranks and applies a
 * {@link StragglerPolicy}. A step's busy time is the time since the previous step less the time this rank's
 * threads waited for collectives meanwhile (a fast rank waits for a slow one in its gradients' allreduce); its cost
 * is that over the rank's samples of the step. The window's median cost of every rank is gathered with one
 * allgather, and every rank decides from the same figures: the ranks change their shares at the same step, and
 * exactly one rank asks to leave. Per step it only reads two clocks and writes one slot; used by one training
 * thread.
 */
final class PaceWatch {
    private static final Logger LOG = LoggerFactory.getLogger(PaceWatch.class);
    /** A new split must shorten the predicted step by more than this, so that noise does not move shares about. */
    private static final double MIN_GAIN = 0.05;

    private final Kolo kolo;
    private final String name;
    private final StragglerPolicy policy;
    private final double ratio;
    private final double evictRatio;
    private final double[] costs;
    private final double[] sorted;
    private final ProgressNotes notes;
    private ElasticState state;
    private int filled;
    private long generation = -1;
    private long lastNanos;
    private long lastWaited;
    private long[] flagged = new long[0];
    /** The ranks' costs per sample, smoothed over the windows of this generation: what a rebalance splits by. */
    private double[] smoothed;
    private boolean leaveAsked;
    /** Whether the shares may move (not for a partitioned sampler): what the warning promises. */
    private boolean movable;
    private volatile double ownRatio = Double.NaN;
    private volatile int ownShare;

    PaceWatch(Kolo kolo, String name, StragglerPolicy policy, double ratio, int window, double evictRatio) {
        this.kolo = kolo;
        this.name = name;
        this.policy = policy;
        this.ratio = ratio;
        this.evictRatio = evictRatio;
        this.costs = new double[window];
        this.sorted = new double[window];
        this.notes = WorkerRegistry.of(kolo).progress();
        Gauge.builder("kolo.straggler.ratio", this, w -> w.ownRatio).tag("sampler", name)
                .description("This rank's busy time per sample over the median rank's, in the last window of steps")
                .register(kolo.meterRegistry());
        Gauge.builder("kolo.straggler.share", this, w -> w.ownShare).tag("sampler", name)
                .description("This rank's samples of each step's global batch").register(kolo.meterRegistry());
    }

    /** Eviction leaves through the state's commit. */
    void register(ElasticState s) {
        this.state = s;
    }

    /** Starts measuring afresh in a new generation: its ranks all start here, after the same commit. */
    void enter() {
        if (generation != kolo.generation()) {
            generation = kolo.generation();
            filled = 0;
            leaveAsked = false;
            flagged = new long[(kolo.size() + 63) / 64];
            smoothed = null;
            lastNanos = System.nanoTime();
            lastWaited = notes.waitedNanos();
        }
    }

    /**
     * The job took one more step, this rank {@code sizes[rank]} samples of it.
     *
     * @param caps each rank's largest share, or null when the shares must stay as they are
     * @return the shares from the next step on, or null to keep {@code sizes}
     */
    int[] stepped(int[] sizes, int[] caps) {
        if (generation != kolo.generation()) {
            enter(); // a new generation without a batches() call: every rank counts its window from here
            return null;
        }
        long now = System.nanoTime();
        long waited = notes.waitedNanos();
        int rank = kolo.rank();
        costs[filled++] = Math.max(1, (now - lastNanos) - (waited - lastWaited)) / (double) sizes[rank];
        ownShare = sizes[rank];
        int[] next = null;
        if (filled == costs.length) {
            filled = 0;
            next = compare(sizes, caps);
            waited = notes.waitedNanos(); // the comparison's own wait is no one's compute
            now = System.nanoTime();
        }
        lastNanos = now;
        lastWaited = waited;
        return next;
    }

    private int[] compare(int[] sizes, int[] caps) {
        System.arraycopy(costs, 0, sorted, 0, costs.length);
        Arrays.sort(sorted);
        double own = sorted[sorted.length / 2];
        double[] all = kolo.allgather("kolo.sampler." + name + ".pace", Tensor.of(new double[] {own}, 1))
                .toDoubleArray();
        double[] ordered = all.clone();
        Arrays.sort(ordered);
        double median = ordered[(ordered.length - 1) / 2]; // the lower one: of two ranks, the faster
        int rank = kolo.rank();
        movable = caps != null;
        ownRatio = all[rank] / median;
        int slowest = 0;
        for (int r = 0; r < all.length; r++) {
            slowest = all[r] > all[slowest] ? r : slowest;
            setFlag(r, all[r] / median > ratio, all, median);
        }
        notes.pace(String.format(Locale.ROOT, "%.2fx%s", ownRatio, isFlagged(rank) ? " straggler" : ""));
        if (policy == StragglerPolicy.EVICT && all[slowest] / median > evictRatio) {
            evict(slowest, all[slowest] / median);
        }
        if (policy != StragglerPolicy.REBALANCE || caps == null) {
            return null;
        }
        int total = 0;
        for (int s : sizes) {
            total += s;
        }
        // A window of a busy machine is noisy: half of each new window's costs, half of the earlier ones'.
        if (smoothed == null) {
            smoothed = all.clone();
        } else {
            for (int r = 0; r < all.length; r++) {
                smoothed[r] = (smoothed[r] + all[r]) / 2;
            }
        }
        int[] balanced = ShareBalance.proportional(smoothed, total, caps);
        double before = ShareBalance.stepTime(sizes, smoothed);
        double after = ShareBalance.stepTime(balanced, smoothed);
        if (after > before * (1 - MIN_GAIN)) {
            return null;
        }
        if (rank == 0) {
            LOG.info("sampler '{}': batch shares {} -> {} for the ranks' speeds (predicted step {} -> {} ms)", name,
                    Arrays.toString(sizes), Arrays.toString(balanced), millis(before), millis(after));
        }
        return balanced;
    }

    private void setFlag(int r, boolean slow, double[] all, double median) {
        boolean was = isFlagged(r);
        if (slow) {
            flagged[r >> 6] |= 1L << r;
        } else {
            flagged[r >> 6] &= ~(1L << r);
        }
        if (kolo.rank() != 0 || was == slow) {
            return;
        }
        if (slow) {
            LOG.warn("sampler '{}': rank {} is a straggler: {}x the median rank's busy time per sample ({} against {} "
                    + "us over the last {} steps){}", name, r, String.format(Locale.ROOT, "%.2f", all[r] / median),
                    micros(all[r]), micros(median), costs.length, advice());
        } else {
            LOG.info("sampler '{}': rank {} keeps pace again ({}x the median rank's busy time per sample)", name, r,
                    String.format(Locale.ROOT, "%.2f", all[r] / median));
        }
    }

    private String advice() {
        switch (policy) {
            case REBALANCE:
                return movable ? "; moving batch share to the faster ranks (KOLO_STRAGGLER=rebalance)"
                        : "; a partitioned sampler cannot move batch share between ranks, so it is only named";
            case EVICT:
                return "; it leaves the job if it stays over " + evictRatio + "x for a window (KOLO_STRAGGLER=evict)";
            default:
                return "; KOLO_STRAGGLER=rebalance would move batch share to the faster ranks, and in an elastic job "
                        + "KOLO_STRAGGLER=evict would let it leave";
        }
    }

    private void evict(int slowest, double slowness) {
        if (leaveAsked || !kolo.config().elastic()) {
            if (!leaveAsked && kolo.rank() == slowest) {
                LOG.warn("sampler '{}': this rank is {}x slower than the median, but a fixed job cannot go on without "
                        + "it (KOLO_STRAGGLER=evict needs an elastic job: KOLO_MIN_NP below KOLO_NP)", name,
                        String.format(Locale.ROOT, "%.2f", slowness));
                leaveAsked = true;
            }
            return;
        }
        leaveAsked = true;
        if (kolo.size() - 1 < kolo.config().get(Settings.MIN_NP)) {
            if (kolo.rank() == 0) {
                LOG.warn("sampler '{}': rank {} is {}x slower than the median but stays: without it the job would have "
                        + "fewer than KOLO_MIN_NP={} workers", name, slowest, String.format(Locale.ROOT, "%.2f",
                        slowness), kolo.config().get(Settings.MIN_NP));
            }
            return;
        }
        if (kolo.rank() == 0 || kolo.rank() == slowest) {
            LOG.warn("sampler '{}': evicting rank {}: {}x slower than the median rank over the last {} steps; it leaves "
                    + "at the next commit and the job goes on without it", name, slowest,
                    String.format(Locale.ROOT, "%.2f", slowness), costs.length);
        }
        if (kolo.rank() == slowest) {
            if (state == null) {
                LOG.warn("sampler '{}': cannot leave: the sampler is not registered with the job's ElasticState "
                        + "(sampler.register(state))", name);
            } else {
                state.requestLeave();
            }
        }
    }

    private boolean isFlagged(int r) {
        return (flagged[r >> 6] & (1L << r)) != 0;
    }

    private static String micros(double nanos) {
        return String.format(Locale.ROOT, "%.1f", nanos / 1e3);
    }

    private static String millis(double nanos) {
        return String.format(Locale.ROOT, "%.2f", nanos / 1e6);
    }
}
