package dev.kolo.runtime.internal.control;

import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.ControlMessage.OpResponse;
import dev.kolo.runtime.internal.control.ControlMessage.ResponseEntry;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Checks of received control messages that need more than one field: the codec has already checked each
 * field's range; these check a message against itself and against the receiving rank's generation. Each
 * returns null when the message is sound, else what is wrong with it.
 */
public final class ControlChecks {
    private ControlChecks() {
    }

    /** An assignment lists every rank once, in rank order, with consistent local ranks. */
    public static String assignment(Assignment a) {
        List<WorkerInfo> workers = a.workers();
        if (workers.isEmpty()) {
            return "assignment of generation " + a.generation() + " lists no workers";
        }
        Set<String> nodes = new HashSet<>();
        for (int i = 0; i < workers.size(); i++) {
            WorkerInfo w = workers.get(i);
            if (w.rank() != i) {
                return "assignment of generation " + a.generation() + " lists rank " + w.rank() + " at position " + i;
            }
            if (w.localRank() < 0 || w.localRank() >= w.localSize() || w.localSize() > workers.size()) {
                return "assignment of generation " + a.generation() + " gives rank " + i + " local rank "
                        + w.localRank() + " of " + w.localSize();
            }
            if (w.dataPort() == 0) {
                return "assignment of generation " + a.generation() + " gives rank " + i + " data port 0";
            }
            if (!nodes.add(w.node())) {
                return "assignment of generation " + a.generation() + " lists node " + w.node() + " twice";
            }
        }
        return null;
    }

    /** The parts of a response every rank can check before running it, whatever it submitted. */
    public static String response(OpResponse r, int size) {
        if (r.entries().isEmpty()) {
            return "response " + r.sequence() + " has no entries";
        }
        if (r.failed()) {
            return null;
        }
        if (r.type() != OpType.ALLREDUCE && r.entries().size() != 1) {
            return r.type().label() + " response " + r.sequence() + " has " + r.entries().size()
                    + " entries; only allreduce is fused";
        }
        for (ResponseEntry e : r.entries()) {
            int expected = r.type() == OpType.ALLGATHER ? size : r.type() == OpType.ALLTOALL ? size * size : 0;
            if (e.perRank().length != expected) {
                return r.type().label() + " '" + e.name() + "' carries " + e.perRank().length
                        + " per-rank counts, expected " + expected;
            }
            if (e.spec() != null && e.spec().type != r.type()) {
                return "response " + r.sequence() + " of type " + r.type().label() + " carries a "
                        + e.spec().type.label() + " spec for '" + e.name() + "'";
            }
        }
        return null;
    }

    /**
     * The per-rank counts of one entry against this rank's own spec: its own rows (allgather) or its own
     * row of the splits matrix (alltoall) must be what it submitted, and the result must fit a tensor.
     */
    public static String entry(OpType type, OpSpec spec, long[] perRank, int rank, int size) {
        if (spec.type != type) {
            return type.label() + " response for '" + spec.name + "', which this rank submitted as "
                    + spec.type.label();
        }
        if (type != OpType.ALLGATHER && type != OpType.ALLTOALL) {
            return null;
        }
        if (spec.shape.length == 0) {
            return type.label() + " '" + spec.name + "' has no dimension 0";
        }
        long rowBytes = spec.rowElements() * spec.dtype.byteSize();
        long rows = 0;
        for (int r = 0; r < size; r++) {
            long n = type == OpType.ALLGATHER ? perRank[r] : perRank[r * size + rank];
            if (n > ControlCodec.MAX_TENSOR_BYTES - rows) {
                return type.label() + " '" + spec.name + "' would receive more than " + ControlCodec.MAX_TENSOR_BYTES
                        + " rows";
            }
            rows += n;
        }
        if (rowBytes > 0 && rows > ControlCodec.MAX_TENSOR_BYTES / rowBytes) {
            return type.label() + " '" + spec.name + "' would receive " + rows + " rows of " + rowBytes
                    + " bytes, more than a tensor holds";
        }
        if (type == OpType.ALLGATHER && perRank[rank] != spec.rows()) {
            return "allgather '" + spec.name + "' counts " + perRank[rank] + " rows for this rank, which submitted "
                    + spec.rows();
        }
        if (type == OpType.ALLTOALL) {
            for (int r = 0; r < size; r++) {
                long mine = r < spec.splits.length ? spec.splits[r] : -1;
                if (perRank[rank * size + r] != mine) {
                    return "alltoall '" + spec.name + "' sends " + perRank[rank * size + r] + " rows to rank " + r
                            + " where this rank asked for " + mine;
                }
            }
        }
        return null;
    }
}
