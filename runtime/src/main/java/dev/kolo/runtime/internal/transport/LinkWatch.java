package dev.kolo.runtime.internal.transport;

import dev.kolo.runtime.WorkerLostException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;

/**
 * One generation's links as the transport's threads watch them: the op thread's selector and the idle thread's,
 * which of the two waits on mapped links (so that a wake-up one of them took reaches the other), and the abort. The
 * pump ({@link FramePump}), the attribution of a loss ({@link PeerLoss}) and the waits between ops share it.
 */
final class LinkWatch {
    final Link[] links; // every link of this generation, for abort
    int count;
    final Selector selector;
    /**
     * Watches every link for incoming bytes while no op runs, for a thread that waits without owning the ring
     * (the worker's collective thread while a caller may drive ops): separate from {@link #selector}, so the
     * two never contend for one selector and its interest sets are never changed under it.
     */
    final Selector idleSelector;
    volatile WorkerLostException abortCause;
    /** Whether some link is mapped: only then do waits announce themselves and drain wake-ups. */
    boolean mapped;
    /** The op's thread is parked (or about to) on mapped links: a wake-up the idle thread took is its too. */
    volatile boolean ownerParking;
    /** The idle thread waits on mapped links: a wake-up the op's thread took may have been its. */
    volatile boolean idleWaiting;
    /** Where each thread reads the wake-up bytes it discards. */
    private final ByteBuffer ownerScratch = ByteBuffer.allocateDirect(64);
    final ByteBuffer idleScratch = ByteBuffer.allocateDirect(64);

    LinkWatch(int size) throws IOException {
        this.selector = Selector.open();
        this.idleSelector = Selector.open();
        this.links = new Link[2 * size];
    }

    /** Watches {@code link} with both selectors. */
    void add(Link link) throws IOException {
        link.channel.configureBlocking(false);
        link.registered(link.channel.register(selector, 0, link));
        link.channel.register(idleSelector, SelectionKey.OP_READ, link);
        links[count++] = link;
        mapped |= link.mapped != null;
    }

    void checkAbort() {
        WorkerLostException cause = abortCause;
        if (cause != null) {
            throw PeerLoss.copy(cause);
        }
    }

    /**
     * Links not involved now must not wake the op's thread: a level-triggered readiness left over from an earlier
     * wait (a frame already queued for a later step) would turn its wait into a busy loop.
     */
    void clearInterestExcept(Link a, Link b) {
        for (int i = 0; i < count; i++) {
            Link l = links[i];
            if (l != a && l != b) {
                l.interest(0);
            }
        }
    }

    /** {@link #clearInterestExcept(Link, Link)} for the four links of two lanes. */
    void clearInterestExcept(Link a, Link b, Link c, Link d) {
        for (int i = 0; i < count; i++) {
            Link l = links[i];
            if (l != a && l != b && l != c && l != d) {
                l.interest(0);
            }
        }
    }

    /**
     * @return whether a link the op waits to read from holds bytes in its wire (a TLS record read together
     *         with the previous one). The op's pumps read every such link before they park, so this is a
     *         guard for the parking wait alone: only links with read interest count, whose pumps consume what it
     *         reports, so it does not spin.
     */
    boolean readAhead() {
        for (int i = 0; i < count; i++) {
            Link l = links[i];
            if (l.wantsRead() && l.mapped == null && l.wire.hasBuffered()) {
                return true;
            }
        }
        return false;
    }

    /** The op's thread consumes a mapped link's wake-ups; if it took the idle thread's, that one looks again. */
    void drainOwner(Link l) {
        if (l != null && l.mapped != null && l.mapped.drainWakeups(ownerScratch) && idleWaiting) {
            idleSelector.wakeup();
        }
    }

    /**
     * Raises (+1) or lowers (-1) the bytes-wait counters of the mapped links among {@code links[0, n)}.
     *
     * @return on raising, whether one of them has bytes (or its peer's end) already: then do not park
     */
    static boolean announce(Link[] links, int n, int delta) {
        boolean ready = false;
        for (int i = 0; i < n; i++) {
            Link l = links[i];
            if (l != null && l.mapped != null) {
                ready |= l.mapped.waitForBytes(delta);
            }
        }
        return ready;
    }

    /** @return whether a read of one of {@code links[0, n)} would deliver bytes its wire already holds */
    static boolean anyBuffered(Link[] links, int n) {
        for (int i = 0; i < n; i++) {
            Link l = links[i];
            if (l != null && l.wire.hasBuffered()) {
                return true;
            }
        }
        return false;
    }

    /** @return the host of {@code peerRank} if this rank has a connection to it, else null */
    String hostOf(int peerRank) {
        for (int i = 0; i < count; i++) {
            if (links[i].peerRank == peerRank) {
                return links[i].peerHost;
            }
        }
        return null;
    }

    static boolean mapped(SelectionKey k) {
        return k.attachment() instanceof Link l && l.mapped != null;
    }

    void closeSelectors() {
        Io.closeQuietly(selector);
        Io.closeQuietly(idleSelector);
    }
}
