package dev.kolo.runtime.internal.negotiation;

import dev.kolo.runtime.internal.control.ControlMessage;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The responses the coordinator has sent in one generation that some rank may not hold yet. The event bus
 * delivers at most once (a member reconnecting loses what was in flight), so a rank that re-sends a request
 * the coordinator has already answered is sent again every response from the first it lacks. A response is
 * forgotten once every rank has reported holding it (each request carries how many the rank holds).
 */
public final class SentResponses {
    private final ArrayDeque<ControlMessage> kept = new ArrayDeque<>();
    /** The sequence of the oldest kept response. */
    private long first;
    /** Per rank, how many responses it last reported holding. */
    private final long[] held;

    public SentResponses(int size) {
        this.held = new long[size];
    }

    /** Keeps a response just sent to every rank; responses come in sequence order. */
    public void sent(ControlMessage response) {
        kept.addLast(response);
    }

    /** Rank {@code rank} holds the responses before {@code received}: those every rank holds are dropped. */
    public void held(int rank, long received) {
        if (rank < 0 || rank >= held.length || received <= held[rank]) {
            return;
        }
        held[rank] = received;
        long everywhere = Arrays.stream(held).min().orElse(0);
        while (first < everywhere && !kept.isEmpty()) {
            kept.removeFirst();
            first++;
        }
    }

    /** @return the responses from sequence {@code received} on, oldest first, for a rank that lacks them */
    public List<ControlMessage> from(long received) {
        List<ControlMessage> out = new ArrayList<>();
        long sequence = first;
        for (ControlMessage m : kept) {
            if (sequence++ >= received) {
                out.add(m);
            }
        }
        return out;
    }
}
