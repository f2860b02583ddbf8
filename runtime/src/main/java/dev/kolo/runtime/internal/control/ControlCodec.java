package dev.kolo.runtime.internal.control;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.ControlMessage.CoordinatorAnnounce;
import dev.kolo.runtime.internal.control.ControlMessage.Hello;
import dev.kolo.runtime.internal.control.ControlMessage.HelloReply;
import dev.kolo.runtime.internal.control.ControlMessage.JoinRequest;
import dev.kolo.runtime.internal.control.ControlMessage.JoinResponse;
import dev.kolo.runtime.internal.control.ControlMessage.MembersChanged;
import dev.kolo.runtime.internal.control.ControlMessage.OpRequest;
import dev.kolo.runtime.internal.control.ControlMessage.OpResponse;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageCodec;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Binary wire format of {@link ControlMessage}s: a type byte, then fields in a fixed order; strings are a
 * 2-byte length and UTF-8, lists a 2-byte count. Decoding checks every length against the buffer and its
 * limits, every enum code, and every number against its range (generations and sequences are never
 * negative, ranks lie in {@code -1..MAX_RANKS-1}, ports in {@code 0..65535}, tensor shapes fit
 * {@link #MAX_TENSOR_BYTES}), so a forged or corrupt message fails with {@link IllegalArgumentException}
 * naming the field, instead of allocating without bound or reaching a handler with nonsense. Receivers
 * drop such a message with a warning ({@link MalformedControl}).
 */
public final class ControlCodec implements MessageCodec<ControlMessage, ControlMessage> {
    public static final String NAME = "kolo.control.v1";
    public static final int MAX_STRING = 4096;
    static final int MAX_LIST = 65535;

    private static final byte HELLO = 1;
    private static final byte HELLO_REPLY = 2;
    private static final byte ASSIGNMENT = 3;
    private static final byte COORDINATOR = 4;
    // 5, 6 (control-plane barriers) and 9 (a request by cache id) are retired: barriers and cached tensors
    // are agreed in the ranks' rounds over the data plane.
    private static final byte MEMBERS = 7;
    private static final byte OP_REQUEST = 8;
    private static final byte OP_RESPONSE = 10;
    /** Flags of a response entry. */
    private static final int ENTRY_HAS_SPEC = 1;
    private static final int ENTRY_CACHEABLE = 2;
    private static final byte JOIN_REQUEST = 11;
    private static final byte JOIN_RESPONSE = 12;
    private static final byte MEMBERSHIP_PENDING = 13;
    private static final byte RANK_STATUS = 14;
    private static final byte CLOSING = 15;
    public static final int MAX_DIMS = 32;
    /** Largest job size a message may describe (rank fields lie below it). */
    static final int MAX_RANKS = MAX_LIST;
    /** A tensor is one direct buffer: its bytes must fit an int. */
    static final long MAX_TENSOR_BYTES = Integer.MAX_VALUE;

    @Override
    public void encodeToWire(Buffer out, ControlMessage m) {
        int lengthAt = out.length();
        out.appendInt(0);
        if (m instanceof Hello h) {
            out.appendByte(HELLO);
            writeWorker(out, h.worker());
            out.appendLong(h.lastGeneration());
        } else if (m instanceof HelloReply r) {
            out.appendByte(HELLO_REPLY);
            out.appendByte((byte) (r.accepted() ? 1 : 0));
            writeString(out, r.reason());
            out.appendInt(r.expected());
            writeStrings(out, r.arrived());
        } else if (m instanceof Assignment a) {
            out.appendByte(ASSIGNMENT);
            out.appendLong(a.generation());
            writeString(out, a.coordinatorNode());
            checkCount(a.workers().size());
            out.appendUnsignedShort(a.workers().size());
            a.workers().forEach(w -> writeWorker(out, w));
        } else if (m instanceof CoordinatorAnnounce c) {
            out.appendByte(COORDINATOR);
            out.appendLong(c.generation());
            writeString(out, c.coordinatorNode());
        } else if (m instanceof MembersChanged c) {
            out.appendByte(MEMBERS);
            writeStrings(out, c.members());
            writeStrings(out, c.removed());
        } else if (m instanceof OpRequest r) {
            out.appendByte(OP_REQUEST);
            out.appendLong(r.generation());
            writeScope(out, r.set());
            out.appendInt(r.rank());
            writeSpec(out, r.spec());
            out.appendLong(r.received());
        } else if (m instanceof OpResponse r) {
            out.appendByte(OP_RESPONSE);
            out.appendLong(r.generation());
            out.appendUnsignedShort(r.set());
            out.appendLong(r.sequence());
            out.appendByte((byte) r.type().ordinal());
            out.appendByte((byte) r.errorKind().ordinal());
            writeString(out, r.error());
            checkCount(r.entries().size());
            out.appendUnsignedShort(r.entries().size());
            for (ControlMessage.ResponseEntry e : r.entries()) {
                writeString(out, e.name());
                out.appendByte((byte) ((e.spec() == null ? 0 : ENTRY_HAS_SPEC) | (e.cacheable() ? ENTRY_CACHEABLE : 0)));
                if (e.spec() != null) {
                    writeSpec(out, e.spec());
                }
                writeLongs(out, e.perRank());
            }
        } else if (m instanceof JoinRequest j) {
            out.appendByte(JOIN_REQUEST);
            out.appendLong(j.generation());
            writeScope(out, j.set());
            out.appendInt(j.rank());
            out.appendLong(j.received());
        } else if (m instanceof ControlMessage.MembershipPending mp) {
            out.appendByte(MEMBERSHIP_PENDING);
            out.appendLong(mp.generation());
        } else if (m instanceof ControlMessage.Closing c) {
            out.appendByte(CLOSING);
            out.appendLong(c.generation());
            out.appendInt(c.rank());
        } else if (m instanceof ControlMessage.RankStatus st) {
            out.appendByte(RANK_STATUS);
            out.appendLong(st.generation());
            out.appendInt(st.rank());
            writeString(out, st.report());
        } else if (m instanceof JoinResponse j) {
            out.appendByte(JOIN_RESPONSE);
            out.appendLong(j.generation());
            out.appendUnsignedShort(j.set());
            out.appendLong(j.sequence());
            out.appendInt(j.lastRank());
        } else {
            throw new IllegalArgumentException("no wire format for " + m.getClass().getName());
        }
        out.setInt(lengthAt, out.length() - lengthAt - 4);
    }

    @Override
    public ControlMessage decodeFromWire(int pos, Buffer in) {
        Reader r = new Reader(in, pos);
        int length = r.i32();
        if (length < 1 || pos + 4L + length > in.length()) {
            throw new IllegalArgumentException("control message length " + length + " does not fit its frame");
        }
        r.end = pos + 4 + length;
        byte type = r.i8();
        ControlMessage m;
        switch (type) {
            case HELLO: m = new Hello(r.worker(), r.generation("lastGeneration")); break;
            case HELLO_REPLY: m = new HelloReply(r.bool("accepted"), r.string(), (int) r.range(r.i32(), 0, MAX_RANKS,
                    "expected"), r.strings()); break;
            case ASSIGNMENT: {
                long gen = r.generation("generation");
                String coordinator = r.nonEmpty(r.string(), "coordinatorNode");
                int n = r.u16();
                r.need(n * 32L); // the fixed part of a worker: 2 string lengths, 5 ints, 1 long
                List<WorkerInfo> workers = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    workers.add(r.worker());
                }
                m = new Assignment(gen, coordinator, List.copyOf(workers));
                break;
            }
            case COORDINATOR: m = new CoordinatorAnnounce(r.generation("generation"),
                    r.nonEmpty(r.string(), "coordinatorNode")); break;
            case MEMBERS: m = new MembersChanged(r.strings(), r.strings()); break;
            case OP_REQUEST: m = new OpRequest(r.generation("generation"), r.scope(), r.rank("rank"), r.spec(),
                    r.sequence("received")); break;
            case OP_RESPONSE: {
                long gen = r.generation("generation");
                int set = r.u16();
                long seq = r.sequence("sequence");
                OpType opType = r.enumValue(OpType.values());
                ControlMessage.ErrorKind kind = r.enumValue(ControlMessage.ErrorKind.values());
                String error = r.string();
                int n = r.u16();
                r.need(n * 5L); // the fixed part of an entry: name length, flags, count
                List<ControlMessage.ResponseEntry> entries = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    String name = r.nonEmpty(r.string(), "entry name");
                    int flags = (int) r.range(r.i8(), 0, ENTRY_HAS_SPEC | ENTRY_CACHEABLE, "entry flags");
                    OpSpec spec = (flags & ENTRY_HAS_SPEC) != 0 ? r.spec() : null;
                    entries.add(new ControlMessage.ResponseEntry(name, (flags & ENTRY_CACHEABLE) != 0, spec,
                            r.counts("entry perRank")));
                }
                m = new OpResponse(gen, set, seq, opType, List.copyOf(entries), kind, error);
                break;
            }
            case JOIN_REQUEST: m = new JoinRequest(r.generation("generation"), r.scope(), r.rank("rank"),
                    r.sequence("received")); break;
            case JOIN_RESPONSE: m = new JoinResponse(r.generation("generation"), r.u16(), r.sequence("sequence"),
                    r.rankOrNone("lastRank")); break;
            case MEMBERSHIP_PENDING: m = new ControlMessage.MembershipPending(r.generation("generation")); break;
            case CLOSING: m = new ControlMessage.Closing(r.generation("generation"), r.rank("rank")); break;
            case RANK_STATUS: m = new ControlMessage.RankStatus(r.generation("generation"), r.rank("rank"), r.string());
                break;
            default: throw new IllegalArgumentException("unknown control message type " + type);
        }
        if (r.pos != r.end) {
            throw new IllegalArgumentException("control message type " + type + " has " + (r.end - r.pos)
                    + " trailing bytes");
        }
        return m;
    }

    @Override
    public ControlMessage transform(ControlMessage m) {
        return m; // records are immutable: local delivery shares them
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public byte systemCodecID() {
        return -1;
    }

    /** A kernel's CPU list ("0-3,6"), or empty; at most this long. */
    private static final java.util.regex.Pattern CPU_LIST = java.util.regex.Pattern.compile("(\\d+(-\\d+)?(,\\d+(-\\d+)?)*)?");
    private static final int MAX_CPU_LIST_CHARS = 4096;

    private static void writeWorker(Buffer out, WorkerInfo w) {
        writeString(out, w.node());
        writeString(out, w.host());
        out.appendInt(w.dataPort());
        out.appendInt(w.metricsPort());
        out.appendLong(w.pid());
        out.appendInt(w.rankHint());
        out.appendInt(w.rank());
        out.appendInt(w.localRank());
        out.appendInt(w.localSize());
        writeString(out, w.cpus());
    }

    private static void writeSpec(Buffer out, OpSpec s) {
        writeString(out, s.name);
        out.appendByte((byte) s.type.ordinal());
        out.appendByte((byte) s.dtype.ordinal());
        if (s.shape.length > MAX_DIMS) {
            throw new IllegalArgumentException("tensor '" + s.name + "' has " + s.shape.length + " dims; at most "
                    + MAX_DIMS + " are supported");
        }
        out.appendByte((byte) s.shape.length);
        for (long d : s.shape) {
            out.appendLong(d);
        }
        out.appendByte((byte) s.reduceOp.ordinal());
        out.appendDouble(s.prescale);
        out.appendDouble(s.postscale);
        out.appendInt(s.root);
        writeLongs(out, s.splits);
        out.appendUnsignedShort(s.groupSize);
    }

    private static void writeLongs(Buffer out, long[] values) {
        checkCount(values.length);
        out.appendUnsignedShort(values.length);
        for (long v : values) {
            out.appendLong(v);
        }
    }

    private static void writeScope(Buffer out, SetScope scope) {
        out.appendUnsignedShort(scope.id());
        checkCount(scope.ranks().size());
        out.appendUnsignedShort(scope.ranks().size());
        for (int r : scope.ranks()) {
            out.appendInt(r);
        }
    }

    private static void writeStrings(Buffer out, List<String> values) {
        checkCount(values.size());
        out.appendUnsignedShort(values.size());
        values.forEach(s -> writeString(out, s));
    }

    private static void writeString(Buffer out, String s) {
        byte[] bytes = (s == null ? "" : s).getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_STRING) {
            throw new IllegalArgumentException("control string of " + bytes.length + " bytes exceeds " + MAX_STRING);
        }
        out.appendUnsignedShort(bytes.length);
        out.appendBytes(bytes);
    }

    private static void checkCount(int n) {
        if (n > MAX_LIST) {
            throw new IllegalArgumentException("control list of " + n + " entries exceeds " + MAX_LIST);
        }
    }

    /** Bounds- and range-checked cursor over a received buffer. */
    private static final class Reader {
        private final Buffer in;
        private int pos;
        private int end;

        Reader(Buffer in, int pos) {
            this.in = in;
            this.pos = pos;
            this.end = in.length();
        }

        void need(long n) {
            if (pos + n > end) {
                throw new IllegalArgumentException("control message truncated: needs " + n + " more bytes at " + pos);
            }
        }

        byte i8() { need(1); return in.getByte(pos++); }
        int u16() { need(2); int v = in.getUnsignedShort(pos); pos += 2; return v; }
        int i32() { need(4); int v = in.getInt(pos); pos += 4; return v; }
        long i64() { need(8); long v = in.getLong(pos); pos += 8; return v; }

        /** @return {@code v} if it lies in {@code lo..hi}, else fails naming {@code field} */
        long range(long v, long lo, long hi, String field) {
            if (v < lo || v > hi) {
                throw new IllegalArgumentException("control field " + field + " = " + v + " is outside " + lo + ".."
                        + hi);
            }
            return v;
        }

        long generation(String field) { return range(i64(), 0, Long.MAX_VALUE, field); }
        long sequence(String field) { return range(i64(), 0, Long.MAX_VALUE, field); }
        int rank(String field) { return (int) range(i32(), 0, MAX_RANKS - 1, field); }
        int rankOrNone(String field) { return (int) range(i32(), -1, MAX_RANKS - 1, field); }

        boolean bool(String field) {
            return range(i8(), 0, 1, field) == 1;
        }

        String nonEmpty(String s, String field) {
            if (s.isEmpty()) {
                throw new IllegalArgumentException("control field " + field + " is empty");
            }
            return s;
        }

        String string() {
            int n = u16();
            if (n > MAX_STRING) {
                throw new IllegalArgumentException("control string of " + n + " bytes exceeds " + MAX_STRING);
            }
            need(n);
            // Strict UTF-8: a lenient decode would turn each bad byte into a 3-byte U+FFFD, a string the encoder
            // may refuse (over MAX_STRING) when the message is forwarded.
            String s;
            try {
                s = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                        .onUnmappableCharacter(CodingErrorAction.REPORT)
                        .decode(java.nio.ByteBuffer.wrap(in.getBytes(pos, pos + n))).toString();
            } catch (CharacterCodingException e) {
                throw new IllegalArgumentException("control string at " + pos + " is not valid UTF-8");
            }
            pos += n;
            return s;
        }

        <E extends Enum<E>> E enumValue(E[] values) {
            int ordinal = i8();
            if (ordinal < 0 || ordinal >= values.length) {
                throw new IllegalArgumentException("invalid " + values[0].getDeclaringClass().getSimpleName()
                        + " code " + ordinal);
            }
            return values[ordinal];
        }

        /** A list of non-negative counts (rows, splits). */
        /** A process set: its id, then its members' ranks (none for the whole generation). */
        SetScope scope() {
            int id = u16();
            int n = u16();
            need(n * 4L);
            List<Integer> ranks = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                ranks.add(rank("set rank"));
            }
            String problem = SetScope.check(id, ranks);
            if (problem != null) {
                throw new IllegalArgumentException("control field set: " + problem);
            }
            return new SetScope(id, ranks);
        }

        long[] counts(String field) {
            int n = u16();
            need(n * 8L);
            long[] out = new long[n];
            for (int i = 0; i < n; i++) {
                out[i] = range(i64(), 0, MAX_TENSOR_BYTES, field);
            }
            return out;
        }

        OpSpec spec() {
            String name = nonEmpty(string(), "tensor name");
            OpType type = enumValue(OpType.values());
            DType dtype = enumValue(DType.values());
            int dims = i8();
            if (dims < 0 || dims > MAX_DIMS) {
                throw new IllegalArgumentException("tensor '" + name + "' claims " + dims + " dims (at most "
                        + MAX_DIMS + ")");
            }
            need(dims * 8L);
            long[] shape = new long[dims];
            // The product of the non-zero dims is bounded too: rowElements() multiplies all dims but the first.
            long product = dtype.byteSize();
            for (int i = 0; i < dims; i++) {
                shape[i] = i64();
                if (shape[i] < 0) {
                    throw new IllegalArgumentException("tensor '" + name + "' has a negative dimension");
                }
                if (shape[i] > 0) {
                    if (shape[i] > MAX_TENSOR_BYTES / product) {
                        throw new IllegalArgumentException("tensor '" + name + "' shape " + Arrays.toString(shape)
                                + " exceeds " + MAX_TENSOR_BYTES + " bytes");
                    }
                    product *= shape[i];
                }
            }
            ReduceOp op = enumValue(ReduceOp.values());
            double prescale = Double.longBitsToDouble(i64());
            double postscale = Double.longBitsToDouble(i64());
            int root = rank("tensor root");
            long[] splits = counts("tensor splits");
            int groupSize = u16(); // OpSpec rejects sizes of 1 and names that are not <group>/<index below size>
            return new OpSpec(name, type, dtype, shape, op, prescale, postscale, root, splits, groupSize);
        }

        List<String> strings() {
            int n = u16();
            need(n * 2L); // every string costs at least its length field
            List<String> out = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                out.add(string());
            }
            return List.copyOf(out);
        }

        WorkerInfo worker() {
            String node = nonEmpty(string(), "worker node");
            String host = nonEmpty(string(), "worker host");
            int dataPort = (int) range(i32(), 0, 65535, "worker dataPort");
            int metricsPort = (int) range(i32(), 0, 65535, "worker metricsPort");
            long pid = range(i64(), -1, Long.MAX_VALUE, "worker pid");
            int rankHint = rankOrNone("worker rankHint");
            int rank = rankOrNone("worker rank");
            int localRank = rankOrNone("worker localRank");
            int localSize = (int) range(i32(), -1, MAX_RANKS, "worker localSize");
            if (localRank >= 0 && localRank >= localSize) {
                throw new IllegalArgumentException("control field worker localRank = " + localRank
                        + " is not below localSize " + localSize);
            }
            String cpus = string();
            if (cpus.length() > MAX_CPU_LIST_CHARS || !CPU_LIST.matcher(cpus).matches()) {
                throw new IllegalArgumentException("control field worker cpus is not a list of CPUs such as 0-3,6");
            }
            return new WorkerInfo(node, host, dataPort, metricsPort, pid, rankHint, rank, localRank, localSize, cpus);
        }
    }
}
