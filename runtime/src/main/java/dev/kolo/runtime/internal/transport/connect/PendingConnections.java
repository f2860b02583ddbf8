package dev.kolo.runtime.internal.transport.connect;

import dev.kolo.runtime.internal.transport.Io;
import dev.kolo.runtime.internal.transport.Wire;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Connections accepted and greeted but not yet claimed by a ring, keyed by (generation, channel, kind, sender).
 * A connection for a future generation waits here until that generation's ring opens, so it is never
 * confused with the current one; connections of generations older than the newest opened are refused.
 */
public final class PendingConnections {
    private static final Logger LOG = LoggerFactory.getLogger(PendingConnections.class);

    /** @param channel the connection, plain or TLS, whose greeting is complete */
    record Parked(Handshake.Hello hello, Wire channel) {
    }

    private record Key(long generation, int channel, byte kind, int sender) {
    }

    /**
     * Unclaimed connections kept at most: a ring needs a handful per generation, so a flood of hellos for
     * made-up future generations is refused instead of holding sockets without bound.
     */
    static final int MAX_PARKED = 1024;

    private final Map<Key, Parked> parked = new HashMap<>();
    private long minGeneration = Long.MIN_VALUE;
    private boolean closed;

    /** @return null if parked, else why the hello is refused */
    synchronized String park(Parked p) {
        Handshake.Hello h = p.hello();
        if (closed) {
            return "the data plane is closed";
        }
        if (h.generation() < minGeneration) {
            return "generation " + h.generation() + " is stale: this worker is at generation " + minGeneration;
        }
        Key key = new Key(h.generation(), h.channel(), h.kind(), h.senderRank());
        if (parked.size() >= MAX_PARKED && !parked.containsKey(key)) {
            return MAX_PARKED + " connections already wait to be claimed by a ring";
        }
        Parked old = parked.put(key, p);
        if (old != null) {
            LOG.warn("data plane: replacing an unclaimed {} by a newer one", old.hello().describe());
            Io.closeQuietly(old.channel());
        }
        notifyAll();
        return null;
    }

    /** Refuses older generations from now on and closes their parked connections. */
    synchronized void advanceTo(long generation) {
        if (generation < minGeneration) {
            throw new IllegalArgumentException(
                    "generation " + generation + " is older than the newest opened, " + minGeneration);
        }
        minGeneration = generation;
        for (Iterator<Parked> it = parked.values().iterator(); it.hasNext();) {
            Parked p = it.next();
            if (p.hello().generation() < generation) {
                LOG.info("data plane: dropping unclaimed {}", p.hello().describe());
                Io.closeQuietly(p.channel());
                it.remove();
            }
        }
    }

    /** @return the parked connection, or null when the deadline passes first */
    synchronized Parked claim(long generation, int channel, byte kind, int sender, long deadlineNanos)
            throws InterruptedException {
        Key key = new Key(generation, channel, kind, sender);
        while (!closed) {
            Parked p = parked.remove(key);
            if (p != null) {
                return p;
            }
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                return null;
            }
            wait(Math.max(1, left / 1_000_000));
        }
        return null;
    }

    synchronized void close() {
        closed = true;
        List<Parked> all = new ArrayList<>(parked.values());
        parked.clear();
        all.forEach(p -> Io.closeQuietly(p.channel()));
        notifyAll();
    }
}
