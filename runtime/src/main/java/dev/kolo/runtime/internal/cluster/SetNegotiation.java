package dev.kolo.runtime.internal.cluster;

import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.SetScope;
import dev.kolo.runtime.internal.control.WorkerInfo;
import dev.kolo.runtime.internal.negotiation.Negotiator;
import dev.kolo.runtime.internal.negotiation.SentResponses;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The coordinator's negotiation of one set of ranks of the current generation: the whole generation, or a
 * process set, each with its own negotiator, numbering of responses, cycle timer and stall warnings, so that
 * the ops of one set never wait for another's. Ranks here are the set's.
 */
final class SetNegotiation {
    final SetScope scope;
    /** The set's workers, by their rank in the set. */
    final List<WorkerInfo> workers;
    final Negotiator negotiator;
    /** What the set's ranks may still lack of the responses sent. */
    final SentResponses sent;
    final Map<String, Long> stallWarned = new HashMap<>();
    long flushTimer = -1;

    private SetNegotiation(SetScope scope, List<WorkerInfo> workers, long generation, long fusionThreshold) {
        this.scope = scope;
        this.workers = List.copyOf(workers);
        this.negotiator = new Negotiator(workers.size(), generation, scope, fusionThreshold);
        this.sent = new SentResponses(workers.size());
    }

    /** The whole generation. */
    static SetNegotiation global(Assignment a, long fusionThreshold) {
        return new SetNegotiation(SetScope.GLOBAL, a.workers(), a.generation(), fusionThreshold);
    }

    /** @return process set {@code scope} of generation {@code a}, or null when it names a rank {@code a} lacks */
    static SetNegotiation processSet(Assignment a, SetScope scope, long fusionThreshold) {
        List<WorkerInfo> members = new ArrayList<>(scope.ranks().size());
        for (int r : scope.ranks()) {
            if (r >= a.workers().size()) {
                return null;
            }
            members.add(a.workers().get(r));
        }
        return new SetNegotiation(scope, members, a.generation(), fusionThreshold);
    }

    /** @return "tensor 'x'" for the whole generation, "tensor 'x' of process set 2" for a set */
    String describe(String tensor) {
        return "tensor '" + tensor + "'" + (scope.global() ? "" : " of process set " + scope.id());
    }
}
