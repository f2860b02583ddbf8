package dev.kolo.runtime.internal.collectives.algorithm;

import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.AllreduceAlgorithms;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.collectives.schedule.Peers;
import dev.kolo.runtime.internal.collectives.schedule.RingContext;
import java.util.ArrayList;
import java.util.List;

/**
 * Allreduce over several hosts, in three phases (NCCL's hierarchy): a ring reduce-scatter among the ranks of each host
 * (through shared memory), after which each rank holds its host's sum of the blocks it owns ({@link HostLayout});
 * for each run of blocks, an allreduce across hosts among the ranks that own it (over TCP); then a ring allgather among
 * the ranks of each host. The bytes that cross hosts are the buffer once per host, in both directions, spread over the
 * owners' connections, against 2(n-1)/n of it on every edge of a flat ring whose edges cross hosts. Each block is
 * reduced across hosts by one allreduce, whose ranks end with identical bytes, and then only copied: every rank ends
 * with the same bytes.
 */
public final class HierarchicalAllreduce implements Algorithm {
    /** A run of blocks this rank owns, the ranks that own it on the other hosts, and its allreduce among them. */
    private record Crossing(int from, int to, RingAllreduce ring, RabenseifnerAllreduce rabenseifner, int size) {
    }

    private final HostLayout layout;
    private final RingContext local;
    private final int generationSize;
    private final int[] localFirst;
    private final List<Crossing> crossings = new ArrayList<>();
    private final AllreduceAlgorithms algorithms;
    /** The allreduce across hosts of one run of blocks: a description of its own, over the op's region. */
    private final OpDescription crossing = new OpDescription();

    /**
     * @param all the generation
     * @param layout its hosts and blocks
     */
    public HierarchicalAllreduce(Peers all, HostLayout layout, Reducer reducer, int chunkBytes, AllreduceAlgorithms algorithms) {
        this.layout = layout;
        this.algorithms = algorithms;
        this.generationSize = all.size;
        int[] host = layout.hostOf(all.rank);
        Peers localPeers = all.subgroup(host);
        this.local = new RingContext(localPeers, reducer, chunkBytes);
        this.localFirst = new int[host.length + 1];
        for (int l = 0; l <= host.length; l++) {
            localFirst[l] = layout.first(host.length, l);
        }
        for (HostLayout.Run run : layout.runs) {
            for (int owner : run.owners()) {
                if (owner == all.rank) {
                    Peers cross = all.subgroup(run.owners());
                    crossings.add(new Crossing(run.from(), run.to(), new RingAllreduce(new RingContext(cross, reducer,
                            chunkBytes)), new RabenseifnerAllreduce(cross, reducer), cross.size));
                }
            }
        }
    }

    /** Allreduces {@code d.count} elements from the region's logical byte {@code d.offset}. */
    @Override
    public void run(OpDescription d) {
        int esize = d.dtype.byteSize();
        d.reduceScatterEndNanos = -1;
        d.crossHostEndNanos = -1;
        if (d.prescale != 1.0) {
            d.region.scale(local.reducer, d.dtype, d.offset, d.offset + d.count * esize, d.prescale);
        }
        // The op's final scale is the whole generation's: applied once, by the allreduce across hosts.
        double finalScale = d.op == ReduceOp.AVERAGE ? d.postscale / generationSize : d.postscale;
        ReduceOp elementWise = d.op == ReduceOp.AVERAGE ? ReduceOp.SUM : d.op;
        int[] bounds = local.schedule.bounds;
        int hostRanks = local.peers.size;
        if (hostRanks > 1) {
            setBounds(bounds, hostRanks, d.offset, d.count, esize);
            local.schedule.configure(d.region, 0, true, false, d.dtype, elementWise, 1.0);
            local.peers.aroundRing(local.schedule, d.seq);
        }
        d.reduceScatterEndNanos = System.nanoTime();
        for (Crossing c : crossings) {
            int from = blockStart(c.from(), d.offset, d.count, esize);
            int elements = (blockStart(c.to(), d.offset, d.count, esize) - from) / esize;
            if (elements == 0) {
                continue; // every owner computes the same empty run
            }
            long bytes = (long) elements * esize;
            crossing.of(d.seq).buffers(null, null, d.region).elements(from, elements, d.dtype).reduce(elementWise, 1.0,
                    finalScale);
            try {
                if (algorithms.choose(bytes, c.size(), false) == AllreduceAlgorithms.Choice.RABENSEIFNER) {
                    c.rabenseifner().run(crossing);
                } else {
                    c.ring().run(crossing);
                }
            } finally {
                crossing.clear();
            }
        }
        d.crossHostEndNanos = System.nanoTime();
        if (hostRanks > 1) {
            setBounds(bounds, hostRanks, d.offset, d.count, esize);
            local.schedule.configure(d.region, 0, false, true, d.dtype, elementWise, 1.0);
            local.peers.aroundRing(local.schedule, d.seq);
        }
    }

    /** Block ranges of the host's ranks, as the layout gives them, in bytes of the region. */
    private void setBounds(int[] bounds, int hostRanks, int offset, int count, int esize) {
        for (int l = 0; l <= hostRanks; l++) {
            bounds[l] = blockStart(localFirst[l], offset, count, esize);
        }
    }

    /** @return the region byte where block {@code b} of the op's {@code count} elements starts */
    private int blockStart(int b, int offset, int count, int esize) {
        return offset + (int) ((long) count * b / layout.blocks) * esize;
    }

}
