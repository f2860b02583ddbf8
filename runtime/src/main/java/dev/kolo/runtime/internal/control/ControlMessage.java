package dev.kolo.runtime.internal.control;

import java.util.List;

/**
 * Messages of the control plane, sent over the Vert.x event bus with {@link ControlCodec}. Every message
 * that belongs to a rendezvous round or ring carries its generation so a receiver can drop stale ones.
 */
public sealed interface ControlMessage {

    /** A worker asks the coordinator for a place in the next generation. */
    record Hello(WorkerInfo worker, long lastGeneration) implements ControlMessage {
    }

    /** The coordinator's answer to {@link Hello}: who has arrived so far, or why this worker is refused. */
    record HelloReply(boolean accepted, String reason, int expected, List<String> arrived) implements ControlMessage {
        /** Starts the reason of an accepted reply that tells a worker it waits outside a job at its maximum. */
        public static final String WAITING = "waiting:";

        /** @return true when the worker waits outside a job that runs at its maximum */
        public boolean waiting() {
            return accepted && reason.startsWith(WAITING);
        }

        /** @return why the worker waits, without the marker */
        public String waitingReason() {
            return reason.substring(Math.min(reason.length(), WAITING.length())).strip();
        }
    }

    /** The coordinator's decision for one generation: every worker with its rank, in rank order. */
    record Assignment(long generation, String coordinatorNode, List<WorkerInfo> workers) implements ControlMessage {
    }

    /** A new coordinator (the oldest member) announces itself after the previous one left. */
    record CoordinatorAnnounce(long generation, String coordinatorNode) implements ControlMessage {
    }

    /**
     * A rank asks for a collective, with every attribute: one its generation's cache does not hold (the first
     * time, a changed spec, one not cacheable), or one sent on because the ranks could not agree on it in their
     * own rounds (a rank joined, or it waited too long). {@code received}: how many of the generation's responses
     * the rank held when it sent this; it tells a re-sent request (one whose answer the coordinator has already
     * sent, numbered {@code received} or later) from a new request under the same name.
     */
    record OpRequest(long generation, SetScope set, int rank, OpSpec spec, long received) implements ControlMessage {
    }

    /**
     * The coordinator's instruction, sent identically to every rank and executed by all in {@code sequence}
     * order, in the agreement round where every rank holds it: run these entries (several allreduces = one
     * fused buffer), or fail them with {@code error}.
     */
    record OpResponse(long generation, int set, long sequence, OpType type, List<ResponseEntry> entries,
                      ErrorKind errorKind, String error) implements ControlMessage {
        public boolean failed() {
            return errorKind != ErrorKind.NONE;
        }
    }

    /**
     * One tensor of a response, with the spec every rank agreed on (absent in an error). {@code cacheable}: every
     * rank submitted the same spec, so every rank caches it when it runs this response, and the next submit of
     * the same spec is agreed among the ranks alone. {@code perRank} holds rows per rank (allgather) or the
     * splits matrix (alltoall).
     */
    record ResponseEntry(String name, boolean cacheable, OpSpec spec, long[] perRank) {
        @Override
        public boolean equals(Object o) {
            return o instanceof ResponseEntry e && name.equals(e.name) && cacheable == e.cacheable
                    && java.util.Objects.equals(spec, e.spec) && java.util.Arrays.equals(perRank, e.perRank);
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hash(name, cacheable, spec, java.util.Arrays.hashCode(perRank));
        }
    }

    /** Why a response fails its entries. */
    enum ErrorKind { NONE, MISMATCH, STALLED, INVALID }

    /**
     * A rank has no more work and joins: it contributes zeros to allreduces until every rank has joined.
     * {@code received} as for {@link OpRequest}.
     */
    record JoinRequest(long generation, SetScope set, int rank, long received) implements ControlMessage {
    }

    /** Every rank of the set has joined; {@code lastRank} (a rank of the set) joined last. */
    record JoinResponse(long generation, int set, long sequence, int lastRank) implements ControlMessage {
    }

    /** Workers wait to join (or one asked to leave): the ranks of {@code generation} regroup at their next commit. */
    record MembershipPending(long generation) implements ControlMessage {
    }

    /**
     * A rank of {@code generation} is closing (its program called close): when it leaves the cluster, the others
     * end the generation as they would for a lost worker, but report it as an orderly end, not a failure. The
     * receiver replies once it has noted it, so the sender leaves only after its peers know: with this message, or
     * with its own notice when it is closing too and had already sent the sender one (the two crossed; the
     * sender then waits for that notice before it stops listening).
     */
    record Closing(long generation, int rank) implements ControlMessage {
    }

    /**
     * A rank's status for the coordinator's status page, sent every status interval: {@code report} is a JSON
     * object (at most {@link ControlCodec#MAX_STRING} bytes) that the page's board reads field by field.
     */
    record RankStatus(long generation, int rank, String report) implements ControlMessage {
    }

    /** Local only: the cluster's members changed; {@code members} oldest first, as every member sees them. */
    record MembersChanged(List<String> members, List<String> removed) implements ControlMessage {
    }
}
