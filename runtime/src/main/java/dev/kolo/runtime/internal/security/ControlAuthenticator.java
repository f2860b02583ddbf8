package dev.kolo.runtime.internal.security;

import dev.kolo.runtime.internal.control.ControlAddresses;
import dev.kolo.runtime.internal.control.ControlCodec;
import dev.kolo.runtime.internal.control.ControlMessage;
import io.vertx.core.buffer.Buffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import javax.crypto.Mac;
import javax.crypto.ShortBufferException;

/**
 * Seals and opens the control messages of one node with the job's control-plane key. A sealed frame is
 *
 * <pre>
 *   u32 length | 0x80 | version 1 | sender node | receiver node | session nonce (16) | counter (u64)
 *   | the ControlCodec frame | tag (16)
 * </pre>
 *
 * (nodes as u16 length + UTF-8). The tag is HMAC-SHA256, truncated to 16 bytes, over everything from the
 * 0x80 marker to the end of the message. The counter counts this sender's messages to that receiver from 1;
 * the session nonce is drawn when the node starts. A receiver accepts a message only if the tag is right,
 * the receiver is itself, and the (sender, nonce, counter) was not accepted before ({@link ReplayWindow}).
 * Node ids are fresh random ids per start, so a message captured on the way to one node is worthless to
 * any other node and to any later incarnation.
 *
 * <p>Thread-safe: each thread that encodes or decodes keeps its own {@link Mac} and scratch array, so no
 * message allocates a Mac.
 */
public final class ControlAuthenticator {
    static final byte SEALED = (byte) 0x80;
    static final byte VERSION = 1;
    static final int TAG_BYTES = 16;
    static final int NONCE_BYTES = 16;
    static final int MAX_NODE_BYTES = 128;

    /** What {@link #open} returns for a message that is dropped. */
    public record Rejected(String reason, String detail) {
    }

    private final byte[] key;
    private final String self;
    private final byte[] sessionNonce = new byte[NONCE_BYTES];
    private final Map<String, AtomicLong> sent = new ConcurrentHashMap<>();
    private final Map<String, ReplayWindow> received = new ConcurrentHashMap<>();
    private final ThreadLocal<Scratch> scratch;
    private final Function<String, String> describeNode;

    /**
     * @param key          the job's control-plane key
     * @param self         this node's id: only messages sealed for it are accepted
     * @param describeNode names a node id for log lines (e.g. with its member address)
     */
    public ControlAuthenticator(byte[] key, String self, Function<String, String> describeNode) {
        this.key = key.clone();
        this.self = self;
        this.describeNode = describeNode;
        new SecureRandom().nextBytes(sessionNonce);
        this.scratch = ThreadLocal.withInitial(() -> new Scratch(JobKeys.newMac(this.key)));
    }

    /** Appends {@code m} sealed for {@code toNode}, encoded by {@code codec}. */
    void seal(Buffer out, String toNode, ControlMessage m, ControlCodec codec) {
        int start = out.length();
        out.appendInt(0);
        int from = out.length();
        out.appendByte(SEALED).appendByte(VERSION);
        writeNode(out, self);
        writeNode(out, toNode);
        out.appendBytes(sessionNonce);
        out.appendLong(sent.computeIfAbsent(toNode, n -> new AtomicLong()).incrementAndGet());
        codec.encodeToWire(out, m);
        int to = out.length();
        Scratch s = scratch.get();
        s.tag(out, from, to);
        out.appendBytes(s.tag, 0, TAG_BYTES);
        out.setInt(start, out.length() - from);
    }

    /** @return true when the frame at {@code pos} is sealed (its first byte after the length is the marker) */
    static boolean isSealed(int pos, Buffer in) {
        return in.length() >= pos + 5 && in.getByte(pos + 4) == SEALED;
    }

    /** @return the authentic message, or a {@link Rejected} saying why not */
    Object open(int pos, Buffer in, ControlCodec codec) {
        String sender = null;
        try {
            int length = in.getInt(pos);
            int end = pos + 4 + length;
            int tagAt = end - TAG_BYTES;
            if (length < 2 + TAG_BYTES || end > in.length() || end < pos) {
                return new Rejected("malformed", "a sealed control message whose length " + length
                        + " does not fit its frame");
            }
            int p = pos + 4;
            if (in.getByte(p) != SEALED || in.getByte(p + 1) != VERSION) {
                return new Rejected("malformed", "a sealed control message of unknown version " + in.getByte(p + 1));
            }
            p += 2;
            int senderLength = nodeLength(in, p, tagAt);
            sender = in.getString(p + 2, p + 2 + senderLength, "UTF-8");
            p += 2 + senderLength;
            int receiverLength = nodeLength(in, p, tagAt);
            String receiver = in.getString(p + 2, p + 2 + receiverLength, "UTF-8");
            p += 2 + receiverLength;
            if (p + NONCE_BYTES + 8 + 4 > tagAt) {
                return new Rejected("malformed", "a truncated sealed control message" + from(sender));
            }
            byte[] nonce = in.getBytes(p, p + NONCE_BYTES);
            p += NONCE_BYTES;
            long counter = in.getLong(p);
            p += 8;
            int inner = in.getInt(p);
            if (inner < 1 || (long) p + 4 + inner != tagAt) {
                return new Rejected("malformed", "a sealed control message" + from(sender)
                        + " whose inner length does not match its frame");
            }
            Scratch s = scratch.get();
            s.tag(in, pos + 4, tagAt);
            s.received(in, tagAt);
            if (!MessageDigest.isEqual(s.tag16, s.receivedTag)) {
                return new Rejected("bad-tag", "a control message" + from(sender) + " with a wrong authentication "
                        + "tag: the sender does not hold this job's KOLO_JOB_SECRET (a stranger, or a worker "
                        + "with another secret), or the message was altered");
            }
            if (!self.equals(receiver)) {
                return new Rejected("wrong-receiver", "a control message" + from(sender) + " sealed for node "
                        + ControlAddresses.shortId(receiver) + ", not this one: replayed from another node");
            }
            ReplayWindow window = received.computeIfAbsent(sender, n -> new ReplayWindow(nonce));
            if (!window.sameSession(nonce)) {
                return new Rejected("replay", "a control message" + from(sender) + " of another session of that node");
            }
            if (!window.accept(counter)) {
                return new Rejected("replay", "a replayed control message" + from(sender) + " (counter " + counter
                        + " was already accepted or is too old)");
            }
            return codec.decodeFromWire(p, in);
        } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
            return new Rejected("malformed", "a malformed control message" + from(sender) + ": " + e.getMessage());
        }
    }

    private String from(String sender) {
        return sender == null ? "" : " claiming to come from " + describeNode.apply(sender);
    }

    private static int nodeLength(Buffer in, int p, int limit) {
        if (p + 2 > limit) {
            throw new IllegalArgumentException("truncated node id");
        }
        int n = in.getUnsignedShort(p);
        if (n > MAX_NODE_BYTES || p + 2 + n > limit) {
            throw new IllegalArgumentException("node id of " + n + " bytes");
        }
        return n;
    }

    private static void writeNode(Buffer out, String node) {
        byte[] b = node.getBytes(StandardCharsets.UTF_8);
        if (b.length > MAX_NODE_BYTES) {
            throw new IllegalArgumentException("node id of " + b.length + " bytes");
        }
        out.appendUnsignedShort(b.length);
        out.appendBytes(b);
    }

    /** One thread's MAC and buffers. */
    private static final class Scratch {
        final Mac mac;
        byte[] bytes = new byte[512];
        final byte[] tag = new byte[32];
        final byte[] tag16 = new byte[TAG_BYTES];
        final byte[] receivedTag = new byte[TAG_BYTES];

        Scratch(Mac mac) {
            this.mac = mac;
        }

        /** Computes the tag of {@code b[from, to)} into {@link #tag} (full) and {@link #tag16} (truncated). */
        void tag(Buffer b, int from, int to) {
            int n = to - from;
            if (bytes.length < n) {
                bytes = new byte[Math.max(n, bytes.length * 2)];
            }
            b.getBytes(from, to, bytes, 0);
            mac.update(bytes, 0, n);
            try {
                mac.doFinal(tag, 0);
            } catch (ShortBufferException e) {
                throw new IllegalStateException(e);
            }
            System.arraycopy(tag, 0, tag16, 0, TAG_BYTES);
        }

        void received(Buffer b, int at) {
            b.getBytes(at, at + TAG_BYTES, receivedTag, 0);
        }
    }
}
