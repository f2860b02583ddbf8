package dev.kolo.runtime.internal.collectives.algorithm;

import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.AllreduceAlgorithms;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.collectives.schedule.ContiguousRegion;
import dev.kolo.runtime.internal.collectives.schedule.Peers;
import dev.kolo.runtime.internal.collectives.schedule.RingContext;
import dev.kolo.runtime.internal.transport.Lane;
import dev.kolo.runtime.internal.transport.Schedule;
import java.nio.ByteBuffer;
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
 *
 * <p>A large buffer in one piece, with as many ranks on every host, goes through in segments, the phases overlapped
 * (NCCL's pipelining across its hierarchy): while the ranks that own segment k exchange it across hosts, the host's
 * ring reduce-scatters segment k + 1 and gathers segment k - 1, both on the op's thread ({@link Lane}). The host's
 * ring runs its phases in one order on every rank of the host (RS 0, RS 1, AG 0, RS 2, AG 1, ..., AG S-1), which no
 * timing can change; a phase that needs the other lane's result waits for it. Measured at 4 hosts x 2 ranks on 2
 * Gbit/s links: the exchange across hosts ran at the links' rate and the phases within the host added 13-19%; with
 * the overlap, 64 MiB reaches 0.956 of the links' bound, against 0.879 (medians of five interleaved runs).
 */
public final class HierarchicalAllreduce implements Algorithm {
    /** A run of blocks this rank owns, the ranks that own it on the other hosts, and its allreduce among them. */
    private record Crossing(int from, int to, Peers owners, RingAllreduce ring, RabenseifnerAllreduce rabenseifner) {
    }

    /** Segments of about this many bytes, when a buffer is pipelined. */
    static final int SEGMENT_BYTES = 1 << 20;
    /** At most this many segments: each adds a ring's start across hosts. */
    static final int MAX_SEGMENTS = 16;

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
                    crossings.add(new Crossing(run.from(), run.to(), cross, new RingAllreduce(new RingContext(cross,
                            reducer, chunkBytes)), new RabenseifnerAllreduce(cross, reducer)));
                }
            }
        }
        boolean uniform = host.length > 1 && layout.blocks == host.length && crossings.size() == 1;
        for (int[] h : layout.hosts) {
            uniform &= h.length == host.length;
        }
        if (uniform) {
            ByteBuffer staging = ByteBuffer.allocateDirect(chunkBytes).order(all.staging().order());
            this.pipelineCross = new RingContext(crossings.get(0).owners(), reducer, chunkBytes, staging);
        } else {
            this.pipelineCross = null;
        }
    }

    /** The exchange across hosts of a pipelined op, with a staging buffer of its own; null: never pipelined. */
    private final RingContext pipelineCross;
    private final Lane hostLane = new Lane();
    private final Lane crossLane = new Lane();
    /**
     * The pipelined op's buffer as the exchange across hosts sees it: views of its own, kept until the next pipelined
     * op or the generation's end, as the data plane keeps its views of the last buffer, so a reused buffer (a fusion
     * buffer, a gradient) costs no allocation per op.
     */
    private final ContiguousRegion crossRegion = new ContiguousRegion();

    /** @return how many segments a buffer of {@code bytes} is pipelined in; under 2: not pipelined */
    static int segments(long bytes) {
        return (int) Math.min(MAX_SEGMENTS, bytes / SEGMENT_BYTES);
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
        int segments = segments((long) d.count * esize);
        if (pipelineCross != null && segments >= 2 && d.region instanceof ContiguousRegion region) {
            runPipelined(d, region, segments, elementWise, finalScale);
            return;
        }
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
                if (algorithms.choose(bytes, c.owners().size, false) == AllreduceAlgorithms.Choice.RABENSEIFNER) {
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

    /**
     * The op in {@code segments} segments, the host's ring and the exchange across hosts overlapped (see the class).
     * The timeline's phases end where the last segment's did: the reduce-scatter within the host, then the exchange
     * across hosts, then the allgather within the host.
     */
    private void runPipelined(OpDescription d, ContiguousRegion region, int segments, ReduceOp elementWise,
            double finalScale) {
        int esize = d.dtype.byteSize();
        crossRegion.viewsOf(region);
        Crossing c = crossings.get(0);
        int hostRanks = local.peers.size;
        int crossRanks = pipelineCross.peers.size;
        int nextHostPhase = 0; // the host's ring's next phase, in hostPhase's order
        int nextCross = 0;
        int scattered = 0; // segments whose reduce-scatter within the host completed
        int crossed = 0; // segments whose exchange across hosts completed
        boolean hostScatters = false;
        int phases = 2 * segments;
        while (crossed < segments || nextHostPhase < phases || hostLane.busy()) {
            if (!hostLane.busy() && nextHostPhase < phases) {
                int phase = hostPhase(nextHostPhase, segments);
                int k = phase / 2;
                boolean scatter = phase % 2 == 0;
                if (scatter || crossed > k) {
                    int from = d.offset + (int) Schedule.split(d.count, segments, k) * esize;
                    int count = (int) (Schedule.split(d.count, segments, k + 1) - Schedule.split(d.count, segments, k));
                    setBounds(local.schedule.bounds, hostRanks, from, count, esize);
                    local.schedule.configure(d.region, 0, scatter, !scatter, d.dtype, elementWise, 1.0);
                    hostLane.start(local.schedule, local.peers.right, local.peers.left);
                    hostScatters = scatter;
                    nextHostPhase++;
                }
            }
            if (!crossLane.busy() && nextCross < segments && scattered > nextCross) {
                int k = nextCross++;
                int segFrom = d.offset + (int) Schedule.split(d.count, segments, k) * esize;
                int segCount = (int) (Schedule.split(d.count, segments, k + 1) - Schedule.split(d.count, segments, k));
                int from = blockStart(c.from(), segFrom, segCount, esize);
                int elements = (blockStart(c.to(), segFrom, segCount, esize) - from) / esize;
                int[] bounds = pipelineCross.schedule.bounds;
                for (int b = 0; b <= crossRanks; b++) {
                    bounds[b] = from + (int) Schedule.split(elements, crossRanks, b) * esize;
                }
                pipelineCross.schedule.configure(crossRegion, 1, true, true, d.dtype, elementWise, finalScale);
                crossLane.start(pipelineCross.schedule, pipelineCross.peers.right, pipelineCross.peers.left);
            }
            boolean hostWasBusy = hostLane.busy();
            boolean crossWasBusy = crossLane.busy();
            local.peers.transport.runLanes(hostLane, crossLane, d.seq);
            if (hostWasBusy && !hostLane.busy() && hostScatters && ++scattered == segments) {
                d.reduceScatterEndNanos = System.nanoTime();
            }
            if (crossWasBusy && !crossLane.busy() && ++crossed == segments) {
                d.crossHostEndNanos = System.nanoTime();
            }
        }
    }

    /**
     * The host's ring's phase number {@code i} in its fixed order: RS 0, RS 1, AG 0, RS 2, AG 1, ..., RS S-1, AG S-2,
     * AG S-1, as 2k for the reduce-scatter of segment k and 2k + 1 for its allgather.
     */
    static int hostPhase(int i, int segments) {
        if (i == 0) {
            return 0;
        }
        if (i == 2 * segments - 1) {
            return 2 * (segments - 1) + 1;
        }
        int k = (i + 1) / 2; // i = 1, 2 -> RS 1, AG 0; i = 3, 4 -> RS 2, AG 1; ...
        return i % 2 == 1 ? 2 * k : 2 * (k - 1) + 1;
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
