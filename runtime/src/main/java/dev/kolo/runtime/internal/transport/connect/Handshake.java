package dev.kolo.runtime.internal.transport.connect;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The first bytes on every data connection. The connecting side sends a hello naming job, generation, channel
 * (0 for the generation's own links, a process set's id for that set's) and both ranks (in that channel); the accepting side answers with an ack (accepted, or rejected with a reason) only once the
 * ring of that generation has claimed the connection and checked the ranks, so each side has checked the
 * other before any data flows.
 *
 * <p>When the job has a secret, the hello's flags say so and a fresh nonce follows it; the acceptor answers
 * with a challenge (an ack of status {@link #CHALLENGE}, its own nonce and its proof) and the connector
 * with its proof, before the connection is parked for a ring (see {@link HandshakeAuth}).
 */
public final class Handshake {
    static final int MAGIC = 0x4B4F4C4F; // "KOLO"
    static final short VERSION = 2;
    /** Connection between ring neighbours, sender = left neighbour of receiver. */
    static final byte KIND_RING = 1;
    /** Connection between two non-neighbours, opened on demand for alltoall; the lower rank connects. */
    static final byte KIND_DIRECT = 2;
    static final int HELLO_FIXED_BYTES = 32;
    /** Most channels (process sets) a generation has besides its own links: the id is written as two bytes. */
    static final int MAX_CHANNEL = 65535;
    static final int ACK_FIXED_BYTES = 22;
    static final int MAX_TEXT_BYTES = 1024;
    static final short ACCEPTED = 0;
    static final short REJECTED = 1;
    /** Largest ring a hello may describe; the same bound as the control plane's rank fields. */
    static final int MAX_RANKS = 65535;
    /** The acceptor's challenge: an ack with no text, followed by its nonce and proof. */
    static final short CHALLENGE = 2;
    /** Hello flag (byte 7): the connector authenticates; a nonce follows the job name. */
    static final byte FLAG_AUTHENTICATED = 1;
    /**
     * Hello flag (byte 7): the two ranks share a host and the connector offers shared memory; a shared-memory offer
     * follows the handshake ({@link dev.kolo.runtime.internal.transport.shm.SharedMemoryUpgrade}) and the acceptor answers it.
     */
    static final byte FLAG_SHARED_MEMORY = 2;
    static final int CHALLENGE_EXTRA_BYTES = HandshakeAuth.NONCE_BYTES + HandshakeAuth.PROOF_BYTES;

    private Handshake() {
    }

    /** A decoded hello; {@code sharedMemory}: a shared-memory offer follows the handshake. */
    record Hello(byte kind, long generation, int channel, int senderRank, int receiverRank, int size, String job,
            boolean sharedMemory) {
        /** A hello without a shared-memory offer. */
        Hello(byte kind, long generation, int channel, int senderRank, int receiverRank, int size, String job) {
            this(kind, generation, channel, senderRank, receiverRank, size, job, false);
        }

        String describe() {
            return (kind == KIND_RING ? "ring" : "direct") + " connection of job '" + job + "' generation "
                    + generation + (channel == 0 ? "" : " process set " + channel) + " from rank " + senderRank + " to rank " + receiverRank + " (size " + size + ")";
        }
    }

    /** A decoded ack. */
    record Ack(short status, long generation, int rank, String reason) {
    }

    static ByteBuffer encodeHello(Hello h) {
        return encodeHello(h, null);
    }

    /** @param nonce the connector's fresh nonce when it authenticates, else null (heap buffer: array() works) */
    static ByteBuffer encodeHello(Hello h, byte[] nonce) {
        byte[] job = h.job().getBytes(StandardCharsets.UTF_8);
        if (job.length > MAX_TEXT_BYTES) {
            throw new IllegalArgumentException("job name longer than " + MAX_TEXT_BYTES + " bytes");
        }
        ByteBuffer b = ByteBuffer.allocate(HELLO_FIXED_BYTES + job.length + (nonce == null ? 0 : nonce.length));
        byte flags = (byte) ((nonce == null ? 0 : FLAG_AUTHENTICATED) | (h.sharedMemory() ? FLAG_SHARED_MEMORY : 0));
        b.putInt(MAGIC).putShort(VERSION).put(h.kind()).put(flags)
                .putLong(h.generation()).putInt(h.senderRank()).putInt(h.receiverRank()).putInt(h.size())
                .putShort((short) h.channel()).putShort((short) job.length).put(job);
        if (nonce != null) {
            b.put(nonce);
        }
        return b.flip();
    }

    /**
     * @param fixed the first {@link #HELLO_FIXED_BYTES} bytes
     * @return true when the connector authenticates (a nonce follows the job name)
     * @throws IllegalArgumentException on unknown flags
     */
    static boolean helloAuthenticated(ByteBuffer fixed) {
        byte flags = fixed.get(7);
        if ((flags & ~(FLAG_AUTHENTICATED | FLAG_SHARED_MEMORY)) != 0) {
            throw new IllegalArgumentException(String.format("unknown hello flags 0x%02x", flags));
        }
        return (flags & FLAG_AUTHENTICATED) != 0;
    }

    /**
     * @param fixed the first {@link #HELLO_FIXED_BYTES} bytes, flipped
     * @return length of the job name that follows
     * @throws IllegalArgumentException on a wrong magic, version or length
     */
    static int helloTextLength(ByteBuffer fixed) {
        return textLength(fixed, 30, "hello field job length");
    }

    /** The length of the text after a fixed part, at {@code at}, once magic and version are checked. */
    private static int textLength(ByteBuffer fixed, int at, String field) {
        checkMagicAndVersion(fixed.getInt(0), fixed.getShort(4));
        int len = fixed.getShort(at) & 0xFFFF;
        if (len > MAX_TEXT_BYTES) {
            throw new IllegalArgumentException(field + " = " + len + " exceeds " + MAX_TEXT_BYTES);
        }
        return len;
    }

    /**
     * @throws IllegalArgumentException naming the field that is out of range: kind, generation (never
     *         negative), size ({@code 2..MAX_RANKS}), sender and receiver rank (distinct ranks of that size), or
     *         a job name that is not UTF-8
     */
    static Hello decodeHello(ByteBuffer fixed, ByteBuffer text) {
        byte kind = fixed.get(6);
        if (kind != KIND_RING && kind != KIND_DIRECT) {
            throw new IllegalArgumentException("hello field kind = " + kind + " is not a connection kind");
        }
        long generation = fixed.getLong(8);
        int sender = fixed.getInt(16);
        int receiver = fixed.getInt(20);
        int size = fixed.getInt(24);
        int channel = fixed.getShort(28) & 0xFFFF;
        if (generation < 0) {
            throw new IllegalArgumentException("hello field generation = " + generation + " is negative");
        }
        if (size < 2 || size > MAX_RANKS) {
            throw new IllegalArgumentException("hello field size = " + size + " is outside 2.." + MAX_RANKS);
        }
        if (sender < 0 || sender >= size || receiver < 0 || receiver >= size || sender == receiver) {
            throw new IllegalArgumentException("hello fields senderRank = " + sender + ", receiverRank = " + receiver
                    + " are not two ranks of a ring of " + size);
        }
        return new Hello(kind, generation, channel, sender, receiver, size, utf8(text, "job"),
                (fixed.get(7) & FLAG_SHARED_MEMORY) != 0);
    }

    static ByteBuffer encodeAck(short status, long generation, int rank, String reason) {
        byte[] r = reason.getBytes(StandardCharsets.UTF_8);
        int len = Math.min(r.length, MAX_TEXT_BYTES);
        ByteBuffer b = ByteBuffer.allocate(ACK_FIXED_BYTES + len);
        b.putInt(MAGIC).putShort(VERSION).putShort(status).putLong(generation).putInt(rank).putShort((short) len)
                .put(r, 0, len).flip();
        return b;
    }

    /** The acceptor's challenge: {@link #CHALLENGE} ack header, then its nonce and proof. */
    static ByteBuffer encodeChallenge(long generation, int rank, byte[] nonce, byte[] proof) {
        ByteBuffer b = ByteBuffer.allocate(ACK_FIXED_BYTES + nonce.length + proof.length);
        b.putInt(MAGIC).putShort(VERSION).putShort(CHALLENGE).putLong(generation).putInt(rank).putShort((short) 0)
                .put(nonce).put(proof);
        return b.flip();
    }

    static int ackTextLength(ByteBuffer fixed) {
        return textLength(fixed, 20, "ack field reason length");
    }

    /** @throws IllegalArgumentException if the status is neither accepted nor rejected */
    static Ack decodeAck(ByteBuffer fixed, ByteBuffer text) {
        short status = fixed.getShort(6);
        if (status != ACCEPTED && status != REJECTED && status != CHALLENGE) {
            throw new IllegalArgumentException("ack field status = " + status
                    + " is not accepted, rejected or a challenge");
        }
        // The reason is only shown to people: decode leniently, it may have been cut mid-character.
        return new Ack(status, fixed.getLong(8), fixed.getInt(16),
                new String(text.array(), 0, text.limit(), StandardCharsets.UTF_8));
    }

    private static String utf8(ByteBuffer text, String field) {
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(text.duplicate()).toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("hello field " + field + " is not valid UTF-8");
        }
    }

    private static void checkMagicAndVersion(int magic, short version) {
        if (magic != MAGIC) {
            throw new IllegalArgumentException(String.format("not a Kolo data-plane peer (magic 0x%08x)", magic));
        }
        if (version != VERSION) {
            throw new IllegalArgumentException("data-plane protocol version " + version + ", expected " + VERSION);
        }
    }
}
