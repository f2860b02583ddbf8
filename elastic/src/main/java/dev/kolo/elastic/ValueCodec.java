package dev.kolo.elastic;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Encodes an {@link ElasticState}'s values and commit number for the broadcast of a sync: a version
 * byte, the commit number, a count, then per value its name, a type byte (L long, D double, S string)
 * and the value. Big-endian ({@link DataOutputStream}); only ever read by the same code on a peer.
 */
final class ValueCodec {
    private static final int VERSION = 1;

    private ValueCodec() {
    }

    record Decoded(long commits, Map<String, Object> values) {
    }

    static byte[] encode(long commits, Map<String, Object> values) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (DataOutputStream out = new DataOutputStream(bytes)) {
            out.writeByte(VERSION);
            out.writeLong(commits);
            out.writeInt(values.size());
            for (Map.Entry<String, Object> e : values.entrySet()) {
                out.writeUTF(e.getKey());
                Object v = e.getValue();
                if (v instanceof Long l) {
                    out.writeByte('L');
                    out.writeLong(l);
                } else if (v instanceof Double d) {
                    out.writeByte('D');
                    out.writeDouble(d);
                } else {
                    out.writeByte('S');
                    byte[] s = ((String) v).getBytes(java.nio.charset.StandardCharsets.UTF_8);
                    out.writeInt(s.length);
                    out.write(s);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return bytes.toByteArray();
    }

    static Decoded decode(byte[] data) {
        try (DataInputStream in = new DataInputStream(new ByteArrayInputStream(data))) {
            int version = in.readUnsignedByte();
            if (version != VERSION) {
                throw new IllegalStateException("elastic state values of version " + version + " (expected "
                        + VERSION + "): workers of different Kolo versions in one job");
            }
            long commits = in.readLong();
            int n = in.readInt();
            if (n < 0 || n > in.available() / 3) { // each value takes at least a name length and a type byte
                throw new IllegalStateException("elastic state values: count " + n + " does not fit "
                        + in.available() + " bytes");
            }
            Map<String, Object> values = new LinkedHashMap<>();
            for (int i = 0; i < n; i++) {
                String name = in.readUTF();
                int type = in.readUnsignedByte();
                switch (type) {
                    case 'L' -> values.put(name, in.readLong());
                    case 'D' -> values.put(name, in.readDouble());
                    case 'S' -> {
                        int len = in.readInt();
                        // The bytes come from another rank: a length beyond what is left must not size an array.
                        if (len < 0 || len > in.available()) {
                            throw new IllegalStateException("elastic state value '" + name + "' claims " + len
                                    + " bytes but " + in.available() + " are left");
                        }
                        byte[] s = new byte[len];
                        in.readFully(s);
                        values.put(name, new String(s, java.nio.charset.StandardCharsets.UTF_8));
                    }
                    default -> throw new IllegalStateException("elastic state value '" + name + "' has unknown type "
                            + type);
                }
            }
            if (in.available() != 0) {
                throw new IllegalStateException("elastic state values: " + in.available() + " trailing bytes");
            }
            return new Decoded(commits, values);
        } catch (IOException e) {
            throw new IllegalStateException("elastic state values are truncated: " + e, e);
        }
    }
}
