package dev.kolo.runtime.internal.engine.execute;

import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import dev.kolo.runtime.internal.collectives.DataPlane;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns one agreed response into data-plane calls: packs fused allreduces into the fusion buffer, lays out
 * allgather, reducescatter and alltoall blocks, and produces the result tensors. Runs on the collective
 * thread only; the fusion buffer is allocated once and grown only when a larger fusion comes along.
 */
public final class CollectiveOps {
    private final int rank;
    private final int size;
    private final DataPlane dataPlane;
    /**
     * Tensors of a fused batch from this size up are reduced in place, as segments of one logical buffer; smaller
     * ones are copied into the fusion buffer, where a copy costs less than the pieces they would cut every
     * frame, reduction and scaling into.
     */
    static final long IN_PLACE_BYTES = 64 * 1024;
    private ByteBuffer fusion = ByteBuffer.allocateDirect(0);
    private ByteBuffer fusionSendView = fusion.duplicate();
    private ByteBuffer fusionView = fusion.duplicate();
    private ByteBuffer[] segmentSend = new ByteBuffer[16];
    private ByteBuffer[] segmentViews = new ByteBuffer[16];
    private int[] segmentLengths = new int[16];
    /** The results of the last allreduce, reused: the caller reads them before the next run. */
    private final List<Tensor> allreduced = new ArrayList<>();
    /** Phase times and traffic of the last run, read by the caller for metrics and the timeline. */
    final Phases phases = new Phases();

    /** Reused for every run: no allocation for bookkeeping on the hot path. */
    static final class Phases {
        long copyInStart = -1;
        long copyInEnd = -1;
        long opStart;
        long opEnd;
        /** Where an allreduce's reduce-scatter ended and its allgather began, -1 when not a ring allreduce. */
        long splitNanos = -1;
        /** Where an allreduce across hosts ended its exchange between hosts and began its allgather, else -1. */
        long crossHostEndNanos = -1;
        long copyOutStart = -1;
        long copyOutEnd = -1;
        long sentBytes;
        long receivedBytes;
        /** How the op's bytes moved: the data plane's transport (shm, tcp, tls, shm+tcp, ...). */
        String transport;

        void reset(String transport) {
            copyInStart = copyInEnd = copyOutStart = copyOutEnd = splitNanos = crossHostEndNanos = -1;
            sentBytes = receivedBytes = 0;
            this.transport = transport;
        }
    }

    /** @return how the data plane moves bytes, for the flight recorder */
    String transport() {
        return dataPlane.transport();
    }

    /** @return the algorithm of the data plane's last call, for the flight recorder */
    String lastAlgorithm() {
        return dataPlane.lastAlgorithm();
    }

    public CollectiveOps(int rank, int size, DataPlane dataPlane) {
        this.rank = rank;
        this.size = size;
        this.dataPlane = dataPlane;
    }

    /**
     * Runs the response's op over {@code inputs} (one per entry, in entry order) and returns the results;
     * an allreduce writes into the caller's {@code outputs} where given (null entries get new tensors).
     */
    List<Tensor> run(OpType type, List<OpSpec> specs, List<long[]> perRank, List<Tensor> inputs,
                     List<Tensor> outputs) {
        phases.reset(dataPlane.transport());
        switch (type) {
            case ALLREDUCE: return allreduce(specs, inputs, outputs);
            case ALLGATHER: return List.of(allgather(specs.get(0), perRank.get(0), inputs.get(0)));
            case BROADCAST: return List.of(broadcast(specs.get(0), inputs.get(0)));
            case REDUCESCATTER: return List.of(reducescatter(specs.get(0), inputs.get(0)));
            case ALLTOALL: return List.of(alltoall(specs.get(0), perRank.get(0), inputs.get(0)));
            default: throw new AssertionError(type);
        }
    }

    private List<Tensor> allreduce(List<OpSpec> specs, List<Tensor> inputs, List<Tensor> given) {
        OpSpec lead = specs.get(0);
        ReduceOp op = AverageScaling.sumOp(lead);
        double prescale = AverageScaling.prescale(lead, size);
        double postscale = AverageScaling.postscale(lead, size);
        List<Tensor> outputs = allreduced;
        outputs.clear();
        if (specs.size() == 1) {
            // Unfused: reduce straight in the result tensor, no fusion-buffer copies.
            Tensor out = resultOf(lead, inputs.get(0), given.get(0));
            phases.opStart = System.nanoTime();
            dataPlane.allreduce(out.data(), 0, (int) lead.numElements(), lead.dtype, op, prescale, postscale);
            phases.opEnd = System.nanoTime();
            phases.splitNanos = dataPlane.lastReduceScatterEndNanos();
            phases.crossHostEndNanos = dataPlane.lastCrossHostEndNanos();
            ringTraffic(lead.byteSize());
            outputs.add(out);
            return outputs;
        }
        // Fused: large tensors are reduced in place (in their result tensors, segments of one logical buffer);
        // the small ones are packed into the fusion buffer, which goes first.
        long packed = 0;
        long total = 0;
        int large = 0;
        for (int i = 0; i < specs.size(); i++) {
            OpSpec s = specs.get(i);
            total += s.byteSize();
            if (s.byteSize() < IN_PLACE_BYTES) {
                packed += s.byteSize();
            } else {
                large++;
            }
        }
        ByteBuffer buf = fusionBuffer(packed);
        phases.copyInStart = System.nanoTime();
        int offset = 0;
        for (int i = 0; i < specs.size(); i++) {
            OpSpec s = specs.get(i);
            if (s.byteSize() < IN_PLACE_BYTES) {
                buf.put(offset, inputs.get(i).data(), 0, (int) s.byteSize());
                offset += (int) s.byteSize();
                outputs.add(null);
            } else {
                outputs.add(resultOf(s, inputs.get(i), given.get(i)));
            }
        }
        phases.copyInEnd = phases.opStart = System.nanoTime();
        if (large == 0) {
            dataPlane.allreduce(buf, 0, (int) (total / lead.dtype.byteSize()), lead.dtype, op, prescale,
                    postscale);
        } else {
            int segments = (packed > 0 ? 1 : 0) + large;
            ensureSegments(segments);
            int s = 0;
            if (packed > 0) {
                segmentSend[s] = fusionSendView;
                segmentViews[s] = fusionView;
                segmentLengths[s++] = (int) packed;
            }
            for (int i = 0; i < specs.size(); i++) {
                Tensor out = outputs.get(i);
                if (out != null) {
                    segmentSend[s] = out.data().duplicate().order(ByteOrder.LITTLE_ENDIAN);
                    segmentViews[s] = out.data().duplicate().order(ByteOrder.LITTLE_ENDIAN);
                    segmentLengths[s++] = (int) specs.get(i).byteSize();
                }
            }
            try {
                dataPlane.allreduce(segmentSend, segmentViews, segmentLengths, segments, lead.dtype, op, prescale,
                        postscale);
            } finally {
                java.util.Arrays.fill(segmentSend, 0, segments, null);
                java.util.Arrays.fill(segmentViews, 0, segments, null);
            }
        }
        phases.opEnd = phases.copyOutStart = System.nanoTime();
        phases.splitNanos = dataPlane.lastReduceScatterEndNanos();
        phases.crossHostEndNanos = dataPlane.lastCrossHostEndNanos();
        ringTraffic(total);
        offset = 0;
        for (int i = 0; i < specs.size(); i++) {
            OpSpec s = specs.get(i);
            if (outputs.get(i) == null) {
                Tensor out = given.get(i) != null ? given.get(i) : Tensor.allocate(s.dtype, s.shape);
                int bytes = (int) s.byteSize();
                out.data().put(0, buf, offset, bytes);
                offset += bytes;
                outputs.set(i, out);
            }
        }
        phases.copyOutEnd = System.nanoTime();
        if (packed == 0) {
            phases.copyInStart = phases.copyInEnd = phases.copyOutStart = phases.copyOutEnd = -1;
        }
        return outputs;
    }

    /** The tensor an allreduce reduces in: the given output (filled with the input), or a copy of the input. */
    private static Tensor resultOf(OpSpec spec, Tensor input, Tensor given) {
        if (given == null) {
            return copyOf(input, spec.shape);
        }
        if (given != input) {
            given.data().put(0, input.data(), 0, (int) spec.byteSize());
        }
        return given;
    }

    private void ensureSegments(int segments) {
        if (segmentLengths.length < segments) {
            int n = Math.max(segments, 2 * segmentLengths.length);
            segmentSend = new ByteBuffer[n];
            segmentViews = new ByteBuffer[n];
            segmentLengths = new int[n];
        }
    }

    /** A ring allreduce moves 2(n-1)/n of the buffer each way (the small-message direct path differs). */
    private void ringTraffic(long bytes) {
        phases.sentBytes = phases.receivedBytes = size == 1 ? 0 : 2 * (size - 1) * bytes / size;
    }

    private Tensor allgather(OpSpec spec, long[] rowsPerRank, Tensor input) {
        long rowBytes = spec.rowElements() * spec.dtype.byteSize();
        long[] bytes = new long[size];
        long totalRows = 0;
        long myOffset = 0;
        for (int r = 0; r < size; r++) {
            bytes[r] = rowsPerRank[r] * rowBytes;
            if (r < rank) {
                myOffset += bytes[r];
            }
            totalRows += rowsPerRank[r];
        }
        long[] shape = spec.shape.clone();
        shape[0] = totalRows;
        Tensor out = Tensor.allocate(spec.dtype, shape);
        out.data().put((int) myOffset, input.data(), 0, (int) input.byteSize());
        phases.opStart = System.nanoTime();
        dataPlane.allgather(out.data(), bytes);
        phases.opEnd = System.nanoTime();
        phases.sentBytes = phases.receivedBytes = out.byteSize() - input.byteSize();
        return out;
    }

    private Tensor broadcast(OpSpec spec, Tensor input) {
        Tensor out = rank == spec.root ? copyOf(input, spec.shape) : Tensor.allocate(spec.dtype, spec.shape);
        phases.opStart = System.nanoTime();
        dataPlane.broadcast(out.data(), 0, (int) out.byteSize(), spec.root);
        phases.opEnd = System.nanoTime();
        phases.sentBytes = size == 1 || rank == Math.floorMod(spec.root - 1, size) ? 0 : out.byteSize();
        phases.receivedBytes = rank == spec.root ? 0 : out.byteSize();
        return out;
    }

    private Tensor reducescatter(OpSpec spec, Tensor input) {
        long rows = spec.rows();
        long rowElements = spec.rowElements();
        long[] elements = new long[size];
        long myOffset = 0;
        for (int r = 0; r < size; r++) {
            long myRows = rows / size + (r < rows % size ? 1 : 0);
            elements[r] = myRows * rowElements;
            if (r < rank) {
                myOffset += elements[r] * spec.dtype.byteSize();
            }
        }
        ReduceOp op = AverageScaling.sumOp(spec);
        double prescale = AverageScaling.prescale(spec, size);
        double postscale = AverageScaling.postscale(spec, size);
        ByteBuffer work = fusionBuffer(input.byteSize());
        work.put(0, input.data(), 0, (int) input.byteSize());
        phases.opStart = System.nanoTime();
        dataPlane.reducescatter(work, elements, spec.dtype, op, prescale, postscale);
        phases.opEnd = System.nanoTime();
        phases.sentBytes = phases.receivedBytes = (size - 1) * input.byteSize() / size;
        long[] shape = spec.shape.clone();
        shape[0] = elements[rank] / Math.max(1, rowElements);
        if (rowElements == 0) {
            shape[0] = rows / size + (rank < rows % size ? 1 : 0);
        }
        Tensor out = Tensor.allocate(spec.dtype, shape);
        out.data().put(0, work, (int) myOffset, (int) out.byteSize());
        return out;
    }

    private Tensor alltoall(OpSpec spec, long[] splitsMatrix, Tensor input) {
        long rowBytes = spec.rowElements() * spec.dtype.byteSize();
        long[] send = new long[size];
        long[] recv = new long[size];
        long recvRows = 0;
        for (int r = 0; r < size; r++) {
            send[r] = splitsMatrix[rank * size + r] * rowBytes;
            recv[r] = splitsMatrix[r * size + rank] * rowBytes;
            recvRows += splitsMatrix[r * size + rank];
        }
        long[] shape = spec.shape.clone();
        shape[0] = recvRows;
        Tensor out = Tensor.allocate(spec.dtype, shape);
        phases.opStart = System.nanoTime();
        dataPlane.alltoall(input.data(), send, out.data(), recv);
        phases.opEnd = System.nanoTime();
        phases.sentBytes = input.byteSize() - send[rank];
        phases.receivedBytes = out.byteSize() - recv[rank];
        return out;
    }

    private static Tensor copyOf(Tensor input, long[] shape) {
        Tensor out = Tensor.allocate(input.dtype(), shape);
        out.data().put(0, input.data(), 0, (int) input.byteSize());
        return out;
    }

    private ByteBuffer fusionBuffer(long bytes) {
        if (fusion.capacity() < bytes) {
            fusion = ByteBuffer.allocateDirect((int) Math.max(bytes, Math.min(Integer.MAX_VALUE, 2L * fusion.capacity())))
                    .order(ByteOrder.LITTLE_ENDIAN);
            fusionSendView = fusion.duplicate().order(ByteOrder.LITTLE_ENDIAN);
            fusionView = fusion.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        }
        return fusion;
    }
}
