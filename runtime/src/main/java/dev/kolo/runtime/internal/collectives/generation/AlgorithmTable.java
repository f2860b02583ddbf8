package dev.kolo.runtime.internal.collectives.generation;

import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.AllreduceAlgorithms;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.collectives.algorithm.AdasumAllreduce;
import dev.kolo.runtime.internal.collectives.algorithm.Algorithm;
import dev.kolo.runtime.internal.collectives.algorithm.BinomialBroadcast;
import dev.kolo.runtime.internal.collectives.algorithm.ChainBroadcast;
import dev.kolo.runtime.internal.collectives.algorithm.DirectAllreduce;
import dev.kolo.runtime.internal.collectives.algorithm.HierarchicalAllreduce;
import dev.kolo.runtime.internal.collectives.algorithm.HostLayout;
import dev.kolo.runtime.internal.collectives.algorithm.PairwiseAlltoall;
import dev.kolo.runtime.internal.collectives.algorithm.RabenseifnerAllreduce;
import dev.kolo.runtime.internal.collectives.algorithm.RecursiveDoublingAllgather;
import dev.kolo.runtime.internal.collectives.algorithm.RecursiveDoublingAllreduce;
import dev.kolo.runtime.internal.collectives.algorithm.RingAllgather;
import dev.kolo.runtime.internal.collectives.algorithm.RingAllreduce;
import dev.kolo.runtime.internal.collectives.algorithm.RingReduceScatter;
import dev.kolo.runtime.internal.collectives.algorithm.RoundCombine;
import dev.kolo.runtime.internal.collectives.schedule.Peers;
import dev.kolo.runtime.internal.collectives.schedule.RingContext;

/**
 * A generation's algorithms, built once when its data plane opens (each with the scratch it keeps from op to op),
 * and which one takes a call: by its kind, its size and the generation's, as {@link AllreduceAlgorithms} says.
 */
final class AlgorithmTable {
    private final AllreduceAlgorithms thresholds;
    private final int size;
    private final Algorithm direct;
    private final Algorithm recursiveDoubling;
    private final Algorithm rabenseifner;
    private final Algorithm ring;
    private final Algorithm adasum;
    /** Allreduces above the small sizes when the generation's hosts hold several ranks, else null. */
    private final Algorithm hierarchical;
    final Algorithm reducescatter;
    private final Algorithm ringAllgather;
    private final Algorithm doublingAllgather;
    private final Algorithm chainBroadcast;
    private final Algorithm binomialBroadcast;
    final Algorithm alltoall;
    /** The agreement rounds' combine: a call shape of its own (a message in, the combined message out). */
    final RoundCombine rounds;

    /**
     * @param all the generation's ranks over its links
     * @param layout its hosts, when they hold several ranks and allreduces above the small sizes span them in a
     *        hierarchy; null for flat allreduces
     */
    AlgorithmTable(Peers all, Reducer reducer, int chunkBytes, AllreduceAlgorithms thresholds, HostLayout layout) {
        this.thresholds = thresholds;
        this.size = all.size;
        RingContext context = new RingContext(all, reducer, chunkBytes);
        this.ring = new RingAllreduce(context);
        this.reducescatter = new RingReduceScatter(context);
        this.ringAllgather = new RingAllgather(context);
        this.chainBroadcast = new ChainBroadcast(all, chunkBytes);
        this.alltoall = new PairwiseAlltoall(all, chunkBytes);
        this.direct = new DirectAllreduce(all, reducer);
        this.recursiveDoubling = new RecursiveDoublingAllreduce(all, reducer,
                size > 2 ? thresholds.recursiveDoublingMaxBytes() : 0);
        this.rabenseifner = new RabenseifnerAllreduce(all, reducer);
        this.adasum = new AdasumAllreduce(all);
        this.doublingAllgather = new RecursiveDoublingAllgather(all, reducer);
        this.binomialBroadcast = new BinomialBroadcast(all, reducer);
        this.hierarchical = layout == null ? null
                : new HierarchicalAllreduce(all, layout, reducer, chunkBytes, thresholds);
        this.rounds = new RoundCombine(all);
    }

    /**
     * @param contiguous whether the bytes are one buffer (the direct exchange and recursive doubling need one; a fused
     *        batch of tensors' own buffers takes the others)
     * @return the allreduce of {@code bytes} by {@code op}
     */
    Algorithm allreduce(long bytes, boolean contiguous, ReduceOp op) {
        if (op == ReduceOp.ADASUM) {
            return adasum;
        }
        if (hierarchical(bytes)) {
            return hierarchical;
        }
        return switch (thresholds.choose(bytes, size, contiguous)) {
            case DIRECT -> direct;
            case RECURSIVE_DOUBLING -> recursiveDoubling;
            case RABENSEIFNER -> rabenseifner;
            case RING -> ring;
        };
    }

    /** @return whether an element-wise allreduce of {@code bytes} takes the hierarchy: when there is one, above the small sizes */
    private boolean hierarchical(long bytes) {
        return hierarchical != null && bytes > thresholds.flatMaxBytes();
    }

    /** @return whether allreduces above the small sizes are hierarchical (the generation's hosts hold several ranks) */
    boolean hierarchical() {
        return hierarchical != null;
    }

    Algorithm allgather(long totalBytes) {
        return thresholds.allgatherByRecursiveDoubling(totalBytes, size) ? doublingAllgather : ringAllgather;
    }

    Algorithm broadcast(long bytes) {
        return thresholds.broadcastByBinomialTree(bytes, size) ? binomialBroadcast : chainBroadcast;
    }

    /** @return the allreduce of a barrier's one byte: the one-hop exchange, or recursive doubling on larger jobs */
    Algorithm barrier() {
        return thresholds.choose(1, size, true) == AllreduceAlgorithms.Choice.RECURSIVE_DOUBLING ? recursiveDoubling
                : direct;
    }
}
