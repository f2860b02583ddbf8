package dev.kolo.runtime.internal.transport.shm;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.runtime.internal.transport.Io;
import dev.kolo.runtime.internal.transport.Transport;
import dev.kolo.runtime.internal.transport.Wire;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.IntPredicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves the data connections between ranks of the same host onto shared memory, once they are connected and have
 * authenticated each other. A connection whose hello offered it (the ranks share an address and the connecting rank
 * has shared memory on; the flag is part of the authenticated hello) is followed by an offer: the rank that connected
 * creates a segment (whose name is gone as soon as it is made) and sends its reference (name and descriptor), ring
 * size and token over the connection (or "none" if it could not make one); the rank that accepted maps it through
 * the creator's descriptor, checks it and answers; both then carry that link's bytes through
 * the segment, keeping the connection as doorbell and watch. A rank with shared memory off, or that cannot map the
 * segment, declines, and the pair stays on TCP: both always agree.
 *
 * <p>Every rank first sends all its offers, then answers all the offers it gets, then reads all its answers, so no
 * wait depends on another around the ring. Each read and write is bounded by the generation's connect deadline.
 *
 * <pre>
 *   offer:  magic "KSHM" (4), version (2), status (1: 1 offer, 0 none), ring capacity (4), reference length (2),
 *           reference ("name:descriptor"), token (16, offers only)
 *   answer: magic "KSHM" (4), version (2), status (1: 1 accepted, 0 declined), reason length (2), reason
 * </pre>
 */
public final class SharedMemoryUpgrade {
    private static final Logger LOG = LoggerFactory.getLogger(SharedMemoryUpgrade.class);
    static final int MAGIC = 0x4B53484D; // "KSHM"
    static final short VERSION = 2;
    static final int OFFER_FIXED_BYTES = 13;
    static final int ANSWER_FIXED_BYTES = 9;
    static final int MAX_NAME_BYTES = 255;
    static final int MAX_REASON_BYTES = 1024;

    private final String job;
    private final long generation;
    private final int rank;
    /** Each rank's data address ({@code host:port}), for messages. */
    private final List<String> peers;
    /** Each rank's host. */
    private final List<String> hosts;
    /** This rank has shared memory on ({@code KOLO_SHM}). */
    private final boolean enabled;
    private final int ringBytes;
    private final PeerCopy copy;
    private final Path dir;
    private final long deadlineNanos;

    /**
     * @param peers each rank's data address ({@code host:port}), for messages
     * @param hosts each rank's host
     * @param enabled whether this rank has shared memory on
     * @param ringBytes the capacity of each ring this rank creates
     * @param copy how this rank copies bytes into the rings it writes
     * @param dir where segments are made ({@code /dev/shm})
     * @param deadlineNanos when the generation's connect deadline passes ({@link System#nanoTime()})
     */
    public SharedMemoryUpgrade(String job, long generation, int rank, List<String> peers, List<String> hosts,
            boolean enabled, int ringBytes, PeerCopy copy, Path dir, long deadlineNanos) {
        this.job = job;
        this.generation = generation;
        this.rank = rank;
        this.peers = peers;
        this.hosts = hosts;
        this.enabled = enabled;
        this.ringBytes = ringBytes;
        this.copy = copy;
        this.dir = dir;
        this.deadlineNanos = deadlineNanos;
    }

    /**
     * Upgrades the connections whose hellos offered shared memory, in place: {@code connected[j]} is the connection this
     * rank opened to rank j, {@code accepted[j]} the one rank j opened to it (null where there is none); {@code offered}
     * says whether this rank's hello to j offered it, {@code peerOffered} whether j's hello did. An upgraded wire's
     * segment is closed by {@code transport}'s release.
     *
     * @return the ranks now reached through shared memory (at least one of their connections)
     */
    public List<Integer> run(Wire[] connected, Wire[] accepted, IntPredicate offered, IntPredicate peerOffered,
            Transport transport) {
        int size = peers.size();
        List<Integer> shared = new ArrayList<>();
        boolean any = false;
        for (int j = 0; j < size; j++) {
            any |= connected[j] != null && offered.test(j) || accepted[j] != null && peerOffered.test(j);
        }
        if (!any) {
            return shared;
        }
        if (enabled) {
            StaleSegments.sweep(dir);
        }
        SharedSegment[] made = new SharedSegment[size];
        try {
            for (int j = 0; j < size; j++) {
                if (connected[j] != null && offered.test(j)) {
                    made[j] = offer(connected[j], j);
                }
            }
            for (int j = 0; j < size; j++) {
                if (accepted[j] != null && peerOffered.test(j)) {
                    SharedSegment s = answer(accepted[j], j);
                    if (s != null) {
                        transport.releaseWith(s);
                        accepted[j] = s.wire(accepted[j].socket(), false, copy);
                        shared.add(j);
                    }
                }
            }
            for (int j = 0; j < size; j++) {
                if (made[j] != null) {
                    SharedSegment s = made[j];
                    made[j] = null;
                    if (accepted(connected[j], j, s)) {
                        transport.releaseWith(s);
                        connected[j] = s.wire(connected[j].socket(), true, copy);
                        if (!shared.contains(j)) {
                            shared.add(j);
                        }
                    } else {
                        Io.closeQuietly(s);
                    }
                }
            }
        } finally {
            for (SharedSegment s : made) {
                Io.closeQuietly(s); // a failure part way: nothing mapped may outlive it
            }
        }
        return shared;
    }

    /** Creates a segment for the connection to {@code peer} and offers it; "none" when it cannot be made. */
    private SharedSegment offer(Wire wire, int peer) {
        SharedSegment s = null;
        try {
            s = SharedSegment.create(dir, job, generation, ringBytes);
        } catch (IOException | RuntimeException e) {
            if (e instanceof java.nio.channels.ClosedByInterruptException || Thread.currentThread().isInterrupted()) {
                // This rank is closing (its data plane's thread was interrupted): no lack of room to report.
                Thread.currentThread().interrupt();
                throw new dev.kolo.runtime.KoloException("interrupted while connecting the data plane");
            }
            LOG.warn("data plane: cannot create a shared-memory segment of {} bytes in {} for rank {} ({}); that "
                    + "pair stays on TCP. Make room there (in Kubernetes, an emptyDir of medium Memory mounted at "
                    + "/dev/shm, within the pod's memory limit), or lower KOLO_SHM_BYTES",
                    SharedSegment.size(ringBytes), dir, peer, e.toString());
        }
        byte[] name = s == null ? new byte[0] : s.reference().getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(OFFER_FIXED_BYTES + name.length + (s == null ? 0 : SharedSegment.TOKEN_BYTES));
        b.putInt(MAGIC).putShort(VERSION).put((byte) (s == null ? 0 : 1)).putInt(s == null ? 0 : s.capacity())
                .putShort((short) name.length).put(name);
        if (s != null) {
            b.put(s.token());
        }
        try {
            Io.writeFully(wire, b.flip(), deadlineNanos);
            return s;
        } catch (IOException e) {
            Io.closeQuietly(s);
            throw lost(peer, "offering shared memory", e);
        }
    }

    /** Reads the offer {@code peer} sent, maps its segment if it made one, and answers. @return the segment, or null */
    private SharedSegment answer(Wire wire, int peer) {
        SharedSegment s = null;
        String reason;
        try {
            ByteBuffer fixed = ByteBuffer.allocate(OFFER_FIXED_BYTES);
            Io.readFully(wire, fixed, deadlineNanos);
            checkMagic(fixed, peer);
            byte status = fixed.get(6);
            int capacity = fixed.getInt(7);
            int nameLength = fixed.getShort(11) & 0xFFFF;
            if (status != 0 && status != 1 || nameLength > MAX_NAME_BYTES) {
                throw protocol(peer, "a shared-memory offer with status " + status + " and a name of " + nameLength
                        + " bytes");
            }
            ByteBuffer name = ByteBuffer.allocate(nameLength + (status == 1 ? SharedSegment.TOKEN_BYTES : 0));
            Io.readFully(wire, name, deadlineNanos);
            if (status == 0) {
                reason = "the peer offered none";
            } else if (!enabled) {
                reason = "rank " + rank + " has KOLO_SHM=false";
            } else if (Integer.bitCount(capacity) != 1 || capacity < SharedRing.MIN_CAPACITY
                    || capacity > SharedRing.MAX_CAPACITY) {
                reason = "ring capacity " + capacity + " is not a power of two from " + SharedRing.MIN_CAPACITY + " to "
                        + SharedRing.MAX_CAPACITY;
            } else {
                String n = new String(name.array(), 0, nameLength, StandardCharsets.UTF_8);
                byte[] token = java.util.Arrays.copyOfRange(name.array(), nameLength, nameLength + SharedSegment.TOKEN_BYTES);
                try {
                    s = SharedSegment.open(dir, n, capacity, token);
                    reason = "";
                } catch (IOException e) {
                    reason = "rank " + rank + " cannot map it: " + e.getMessage();
                }
            }
        } catch (IOException e) {
            throw lost(peer, "reading its shared-memory offer", e);
        }
        byte[] text = reason.getBytes(StandardCharsets.UTF_8);
        int len = Math.min(text.length, MAX_REASON_BYTES);
        ByteBuffer b = ByteBuffer.allocate(ANSWER_FIXED_BYTES + len);
        b.putInt(MAGIC).putShort(VERSION).put((byte) (s == null ? 0 : 1)).putShort((short) len).put(text, 0, len);
        try {
            Io.writeFully(wire, b.flip(), deadlineNanos);
        } catch (IOException e) {
            Io.closeQuietly(s);
            throw lost(peer, "answering its shared-memory offer", e);
        }
        if (s == null && !reason.equals("the peer offered none")) {
            LOG.info("data plane: rank {} stays on TCP with co-located rank {}: {}", rank, peer, reason);
        }
        return s;
    }

    /** Reads {@code peer}'s answer to this rank's offer of {@code s}. @return whether it mapped the segment */
    private boolean accepted(Wire wire, int peer, SharedSegment s) {
        try {
            ByteBuffer fixed = ByteBuffer.allocate(ANSWER_FIXED_BYTES);
            Io.readFully(wire, fixed, deadlineNanos);
            checkMagic(fixed, peer);
            byte status = fixed.get(6);
            int len = fixed.getShort(7) & 0xFFFF;
            if (status != 0 && status != 1 || len > MAX_REASON_BYTES) {
                throw protocol(peer, "a shared-memory answer with status " + status + " and a reason of " + len + " bytes");
            }
            ByteBuffer reason = ByteBuffer.allocate(len);
            Io.readFully(wire, reason, deadlineNanos);
            if (status == 0) {
                LOG.info("data plane: rank {} stays on TCP with co-located rank {}: {}", rank, peer,
                        new String(reason.array(), 0, len, StandardCharsets.UTF_8));
            }
            return status == 1;
        } catch (IOException e) {
            throw lost(peer, "reading its answer to the shared-memory offer of " + s.name(), e);
        }
    }

    private void checkMagic(ByteBuffer fixed, int peer) {
        if (fixed.getInt(0) != MAGIC || fixed.getShort(4) != VERSION) {
            throw protocol(peer, String.format("magic 0x%08x version %d where a shared-memory message belongs",
                    fixed.getInt(0), fixed.getShort(4)));
        }
    }

    private KoloException protocol(int peer, String what) {
        return new KoloException("rank " + peer + " (" + peers.get(peer) + ") sent " + what + " while generation "
                + generation + " connected; every worker of the job must run the same Kolo version");
    }

    private WorkerLostException lost(int peer, String what, Exception e) {
        WorkerLostException x = new WorkerLostException("data connection from rank " + rank + " to rank " + peer + " ("
                + peers.get(peer) + ") failed " + what + " for generation " + generation + ": " + e.getMessage(), peer,
                hosts.get(peer));
        x.initCause(e);
        return x;
    }
}
