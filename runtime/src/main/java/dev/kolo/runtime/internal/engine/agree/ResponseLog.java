package dev.kolo.runtime.internal.engine.agree;

import dev.kolo.runtime.internal.control.ControlMessage;
import dev.kolo.runtime.internal.control.ControlMessage.JoinResponse;
import dev.kolo.runtime.internal.control.ControlMessage.OpResponse;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The coordinator's numbered responses (and join completions) as they reach this rank: held by sequence until
 * every rank reports holding them in a round, then run in sequence order, so that every rank runs them at the
 * same point. The event bus may deliver a response again (the coordinator re-sends what a rank lacks): a copy
 * is dropped here.
 */
final class ResponseLog {
    /** Responses held and not run yet, by sequence. */
    private final TreeMap<Long, ControlMessage> responses = new TreeMap<>();
    /** When each held response arrived: one held too long while a rank lacks it ends the generation. */
    private final Map<Long, Long> arrivals = new HashMap<>();
    /** Responses held contiguously from sequence 0 (every one below has arrived). */
    private long received;
    /** Responses run (every one below). */
    private long executed;

    /** @return the count every round message and coordinator request carries: responses held from 0 on */
    long received() {
        return received;
    }

    long executed() {
        return executed;
    }

    /** @return whether a response is held here that has not run */
    boolean pending() {
        return received > executed;
    }

    /** @return whether {@code m} is a copy of a response held or run here (the coordinator re-sent it) */
    boolean isCopy(ControlMessage m) {
        long sequence = sequence(m);
        return sequence < received || responses.containsKey(sequence);
    }

    /**
     * Holds a response that is no copy. @return whether {@link #received} grew: the next round tells the
     * other ranks
     */
    boolean add(ControlMessage m, long arrivedNanos) {
        long sequence = sequence(m);
        responses.put(sequence, m);
        arrivals.put(sequence, arrivedNanos);
        boolean grew = false;
        while (responses.containsKey(received)) {
            received++;
            grew = true;
        }
        return grew;
    }

    private static long sequence(ControlMessage m) {
        return m instanceof OpResponse r ? r.sequence() : ((JoinResponse) m).sequence();
    }

    /** @return when the next response to run arrived, or null when it has not */
    Long nextArrival() {
        if (responses.isEmpty()) {
            return null; // the steady state of cached ops: no key boxed for the lookup
        }
        return arrivals.get(executed);
    }

    /** Takes the next response to run (it has arrived: {@link #received} is past it). */
    ControlMessage takeNext() {
        long sequence = executed++;
        arrivals.remove(sequence);
        return responses.remove(sequence);
    }

    /** The generation ended: nothing held will run. */
    void clear() {
        responses.clear();
        arrivals.clear();
        executed = received;
    }

    /** @return how many responses are held here, not run yet */
    int size() {
        return responses.size();
    }
}
