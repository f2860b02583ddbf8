package dev.kolo.runtime.internal.collectives;

import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.transport.Link;
import dev.kolo.runtime.internal.transport.RingProtocolException;
import dev.kolo.runtime.internal.transport.Transport;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;

/**
 * One message from every rank to every other rank, of a length each receiver learns from the frame header
 * and bounds by what it accepts: the agreement round of the negotiation fast path (each rank's set of ready
 * tensors and, for small ones, their data). All peers' sends and receives progress in one loop, so no message
 * size can deadlock the exchange: every rank drains what the others send while it sends.
 *
 * <p>Buffers are direct, little-endian, owned here and grown only when a larger message is asked for; one
 * view per peer, so nothing is allocated per round.
 */
final class PeerExchange {
    private final Transport transport;
    private final Link[] sendLinks;
    private final Link[] recvLinks;
    private final int size;
    private final int rank;
    private final int[] lengths;
    private final boolean[] writeBlocked;
    private ByteBuffer outbox = ByteBuffer.allocateDirect(0);
    private final ByteBuffer[] outViews;
    private ByteBuffer inbox = ByteBuffer.allocateDirect(0);
    private final ByteBuffer[] inViews;
    private int slotBytes;

    PeerExchange(Transport transport, Link[] sendLinks, Link[] recvLinks) {
        this.transport = transport;
        this.sendLinks = sendLinks;
        this.recvLinks = recvLinks;
        this.size = transport.size;
        this.rank = transport.rank;
        this.lengths = new int[size];
        this.writeBlocked = new boolean[size];
        this.outViews = new ByteBuffer[size];
        this.inViews = new ByteBuffer[size];
    }

    /** @return the outgoing message buffer, at least {@code capacity} bytes; absolute writes from offset 0 */
    ByteBuffer outbox(int capacity) {
        if (outbox.capacity() < capacity) {
            outbox = ByteBuffer.allocateDirect(grow(outbox.capacity(), capacity)).order(ByteOrder.LITTLE_ENDIAN);
            for (int j = 0; j < size; j++) {
                outViews[j] = outbox.duplicate().order(ByteOrder.LITTLE_ENDIAN);
            }
        }
        return outbox;
    }

    /** @return the buffer holding every peer's message of the last exchange, at {@link #offset(int)} */
    ByteBuffer inbox() {
        return inbox;
    }

    int offset(int peer) {
        return peer * slotBytes;
    }

    int length(int peer) {
        return lengths[peer];
    }

    /**
     * Sends {@code outbox[0, length)} to every peer and receives each peer's message, at most {@code maxBytes}.
     *
     * @throws WorkerLostException naming the peer whose connection closed, failed, stalled or sent a frame
     *         that is not this round's
     */
    void run(long seq, int length, int maxBytes) {
        if (length > outbox.capacity() || length > maxBytes) {
            throw new IllegalArgumentException("round message of " + length + " bytes exceeds its buffer ("
                    + outbox.capacity() + ") or the bound peers accept (" + maxBytes + ")");
        }
        if (slotBytes < maxBytes) {
            slotBytes = grow(slotBytes, maxBytes);
            inbox = ByteBuffer.allocateDirect(Math.multiplyExact(slotBytes, size)).order(ByteOrder.LITTLE_ENDIAN);
            for (int j = 0; j < size; j++) {
                inViews[j] = inbox.duplicate().order(ByteOrder.LITTLE_ENDIAN);
            }
        }
        long generation = transport.generation;
        int pendingSends = 0;
        int pendingRecvs = 0;
        for (int j = 0; j < size; j++) {
            if (j == rank) {
                continue;
            }
            outViews[j].clear();
            sendLinks[j].out.begin(generation, seq, 0, outViews[j], 0, length);
            inViews[j].clear();
            recvLinks[j].in.beginUpTo(inViews[j], offset(j), maxBytes);
            writeBlocked[j] = false;
            pendingSends++;
            pendingRecvs++;
        }
        lengths[rank] = length;
        long lastProgress = System.nanoTime();
        Link current = null;
        try {
            while (pendingSends + pendingRecvs > 0) {
                transport.checkAbort();
                boolean progressed = false;
                for (int j = 0; j < size; j++) {
                    if (j == rank) {
                        continue;
                    }
                    Link in = recvLinks[j];
                    if (in.in.busy()) {
                        current = in;
                        long n = in.in.pump(in.wire);
                        if (n < 0) {
                            throw transport.lost(in, "closed the connection", seq, null);
                        }
                        progressed |= n > 0;
                        if (in.in.headerComplete()) {
                            String mismatch = in.in.check(generation, seq, 0);
                            if (mismatch != null) {
                                throw new RingProtocolException("data-plane protocol error from rank " + in.peerRank
                                        + " (" + in.peerHost + ") in generation " + generation + ": " + mismatch,
                                        in.peerRank, in.peerHost);
                            }
                        }
                        if (!in.in.busy()) {
                            lengths[j] = in.in.length();
                            pendingRecvs--;
                        }
                    }
                    Link out = sendLinks[j];
                    if (out.out.busy()) {
                        current = out;
                        long n = out.out.pump(out.wire);
                        writeBlocked[j] = n == 0;
                        progressed |= n > 0;
                        if (!out.out.busy()) {
                            pendingSends--;
                        }
                    }
                }
                if (progressed) {
                    lastProgress = System.nanoTime();
                } else {
                    lastProgress = transport.park(interests(), lastProgress, seq);
                }
            }
        } catch (IOException e) {
            throw transport.lostOrAborted(current, e, seq);
        } catch (ClosedSelectorException | CancelledKeyException e) {
            WorkerLostException cause = transport.abortCause();
            throw cause != null ? Transport.copy(cause) : transport.lost(current, "was closed (" + e + ")", seq, e);
        } finally {
            for (int j = 0; j < size; j++) {
                if (j != rank) {
                    sendLinks[j].out.reset();
                    recvLinks[j].in.reset();
                }
            }
        }
    }

    /**
     * Sets each link's interest from what it still waits for (every link of the generation serves exactly one
     * peer, so this covers them all); @return the link to blame on a deadline
     */
    private Link interests() {
        Link culprit = null;
        for (int j = 0; j < size; j++) {
            if (j == rank) {
                continue;
            }
            Link in = recvLinks[j];
            Link out = sendLinks[j];
            boolean read = in.in.busy();
            boolean write = out.out.busy() && writeBlocked[j];
            int readOps = read ? SelectionKey.OP_READ : 0;
            int writeOps = write ? SelectionKey.OP_WRITE : 0;
            if (in == out) {
                in.interest(readOps | writeOps);
            } else {
                in.interest(readOps);
                out.interest(writeOps);
            }
            if (culprit == null && (read || write)) {
                culprit = read ? in : out;
            }
        }
        return culprit;
    }

    private static int grow(int current, int wanted) {
        return (int) Math.min(Integer.MAX_VALUE, Math.max(wanted, 2L * current));
    }
}
