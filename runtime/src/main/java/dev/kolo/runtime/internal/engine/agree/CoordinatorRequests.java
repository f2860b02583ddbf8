package dev.kolo.runtime.internal.engine.agree;

import dev.kolo.runtime.internal.control.ControlMessage.JoinRequest;
import dev.kolo.runtime.internal.control.ControlMessage.OpRequest;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.SetScope;
import dev.kolo.runtime.internal.observability.KoloMetrics;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What this rank has asked the coordinator and not had answered: its requests, by tensor name, and its join.
 * Each goes again every {@link #RESEND_NANOS} until its answer arrives, because the event bus delivers at most
 * once (what is in flight while a member reconnects is lost): without a resend, a lost request or response
 * would stall its tensor until the stall inspector fails it. The coordinator counts a copy once (by the
 * responses the rank held when it sent it) and answers it by sending again the responses the rank lacks; a
 * request that merely waits for a slow peer costs one small message per interval.
 */
final class CoordinatorRequests {
    /** How long a request to the coordinator goes unanswered before this rank sends it again. */
    static final long RESEND_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final ToCoordinator coordinator;
    private final String coordinatorNode;
    private final long generation;
    private final SetScope scope;
    private final int rank;
    private final KoloMetrics metrics;
    /** Requests sent and not answered yet, by tensor name. */
    private final Map<String, Unanswered> unanswered = new LinkedHashMap<>();
    /** When this rank's join was last sent, while its completion has not arrived; -1 when none. */
    private long joinSentNanos = -1;
    /** When the oldest unanswered request is due to be sent again; Long.MAX_VALUE when none. */
    private long resendAt = Long.MAX_VALUE;

    /** @param rank this rank in {@code scope} */
    CoordinatorRequests(ToCoordinator coordinator, String coordinatorNode, long generation, SetScope scope, int rank,
                        KoloMetrics metrics) {
        this.coordinator = coordinator;
        this.coordinatorNode = coordinatorNode;
        this.generation = generation;
        this.scope = scope;
        this.rank = rank;
        this.metrics = metrics;
    }

    /** A request to the coordinator whose answer has not arrived. */
    private static final class Unanswered {
        final OpSpec spec;
        long sentNanos;

        Unanswered(OpSpec spec, long sentNanos) {
            this.spec = spec;
            this.sentNanos = sentNanos;
        }
    }

    /** Asks the coordinator to negotiate {@code spec}, saying how many responses this rank holds. */
    void request(OpSpec spec, long received) {
        coordinator.send(coordinatorNode, new OpRequest(generation, scope, rank, spec, received));
        long now = System.nanoTime();
        unanswered.put(spec.name, new Unanswered(spec, now));
        resendAt = Math.min(resendAt, now + RESEND_NANOS);
    }

    /** Tells the coordinator this rank has joined. */
    void join(long received) {
        coordinator.send(coordinatorNode, new JoinRequest(generation, scope, rank, received));
        joinSentNanos = System.nanoTime();
        resendAt = Math.min(resendAt, joinSentNanos + RESEND_NANOS);
    }

    /** The request for {@code name} is answered. */
    void answered(String name) {
        unanswered.remove(name);
    }

    /** The join is answered. */
    void joinAnswered() {
        joinSentNanos = -1;
    }

    /** @return when a request or the join is next due to be sent again; Long.MAX_VALUE when none */
    long resendAt() {
        return resendAt;
    }

    /**
     * Sends again the requests (and the join) unanswered for {@link #RESEND_NANOS}, with how many responses
     * this rank holds now: the coordinator tells the copy from a new request by it.
     */
    void resendDue(long now, long received) {
        if (now < resendAt) {
            return;
        }
        long next = Long.MAX_VALUE;
        for (Unanswered u : unanswered.values()) {
            if (now - u.sentNanos >= RESEND_NANOS) {
                coordinator.send(coordinatorNode, new OpRequest(generation, scope, rank, u.spec, received));
                metrics.resent();
                u.sentNanos = now;
            }
            next = Math.min(next, u.sentNanos + RESEND_NANOS);
        }
        if (joinSentNanos >= 0) {
            if (now - joinSentNanos >= RESEND_NANOS) {
                coordinator.send(coordinatorNode, new JoinRequest(generation, scope, rank, received));
                metrics.resent();
                joinSentNanos = now;
            }
            next = Math.min(next, joinSentNanos + RESEND_NANOS);
        }
        resendAt = next;
    }

    /** The generation ended: nothing is sent again. */
    void clear() {
        unanswered.clear();
        joinSentNanos = -1;
        resendAt = Long.MAX_VALUE;
    }

    /** @return how many requests wait for the coordinator's answer */
    int size() {
        return unanswered.size();
    }
}
