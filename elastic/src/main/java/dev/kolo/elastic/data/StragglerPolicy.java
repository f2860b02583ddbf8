package dev.kolo.elastic.data;

/**
 * What a job whose steps an {@link ElasticSampler} drives does about a rank slower than the others
 * ({@code KOLO_STRAGGLER}, or {@link ElasticSampler.Builder#straggler}). Every policy but {@link #OFF} measures each
 * rank's busy time per sample (a step's time less the time it waited for collectives, over its samples) and, every
 * window of steps, compares the ranks' medians with one small collective; the ranks decide alike from the same
 * figures, so a change of batch shares takes effect at the same step on every rank.
 */
public enum StragglerPolicy {
    /** Measures nothing and never compares the ranks. */
    OFF,
    /**
     * A rank slower than the ratio times the median is named in rank 0's log, on the status page (its row's
     * pace) and in the metric {@code kolo.straggler.ratio}.
     */
    WARN,
    /**
     * As {@link #WARN}, and the job moves batch share from slow ranks to fast ones, in proportion to their speeds,
     * keeping the global batch: each rank's gradient weight ({@link ElasticSampler#gradientWeight}) follows, so
     * the update is the one of the same global batch on one process. Not for a partitioned sampler (it warns).
     */
    REBALANCE,
    /**
     * As {@link #WARN}, and in an elastic job a rank slower than the eviction ratio over a whole window asks to
     * leave at the next commit (through the {@link dev.kolo.elastic.ElasticState} the sampler is registered with);
     * the others go on without rollback, the epoch's rest split among them. Never below the job's fewest workers.
     */
    EVICT
}
