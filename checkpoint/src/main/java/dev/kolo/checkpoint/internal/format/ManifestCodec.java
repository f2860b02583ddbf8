package dev.kolo.checkpoint.internal.format;

import dev.kolo.checkpoint.CheckpointId;
import dev.kolo.checkpoint.CorruptCheckpointException;
import dev.kolo.runtime.DType;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * Writes and reads {@code manifest.json}: pretty-printed UTF-8 JSON whose last member is
 * {@code "manifestCrc32c": "xxxxxxxx"}, the CRC32C of the whole file with those 8 hex digits replaced
 * by {@code 00000000}. The reader checks that checksum before it trusts anything else, then every field.
 */
public final class ManifestCodec {
    private static final String CRC_FIELD = "\"manifestCrc32c\": \"";
    private static final String CRC_TAIL = "\"\n}\n";
    private static final String PLACEHOLDER = "00000000";
    /**
     * Largest manifest a reader accepts (about 1.5 million tensors): stores read at most this many bytes, so
     * a damaged or hostile file cannot make a reader allocate without bound.
     */
    public static final int MAX_BYTES = 256 << 20;

    private ManifestCodec() {
    }

    public static byte[] encode(Manifest m) {
        StringBuilder sb = new StringBuilder(512 + 160 * m.tensors().size());
        sb.append("{\n");
        field(sb, "format", Manifest.FORMAT_NAME);
        field(sb, "formatVersion", m.formatVersion());
        field(sb, "id", m.id().name());
        field(sb, "uuid", m.uuid().toString());
        field(sb, "job", m.job());
        field(sb, "step", m.id().step());
        field(sb, "epoch", m.epoch());
        field(sb, "generation", m.id().generation());
        field(sb, "worldSize", m.worldSize());
        field(sb, "createdAt", m.createdAt().toString());
        field(sb, "byteOrder", "little-endian");
        field(sb, "dataFile", Manifest.DATA_FILE);
        field(sb, "dataBytes", m.dataBytes());
        field(sb, "headerBytes", Manifest.HEADER_BYTES);
        field(sb, "alignment", Manifest.ALIGNMENT);
        sb.append("  \"scalars\": [");
        int i = 0;
        for (Map.Entry<String, Object> e : m.scalars().entrySet()) {
            sb.append(i++ == 0 ? "\n    " : ",\n    ");
            Map<String, Object> s = new LinkedHashMap<>();
            s.put("name", e.getKey());
            Object v = e.getValue();
            if (v instanceof Long) {
                s.put("type", "long");
                s.put("value", v);
            } else if (v instanceof Double d) {
                s.put("type", "double");
                s.put("value", d.isNaN() || d.isInfinite() ? d.toString() : d);
            } else {
                s.put("type", "string");
                s.put("value", v);
            }
            Json.writeTo(sb, s);
        }
        sb.append(i == 0 ? "],\n" : "\n  ],\n");
        sb.append("  \"metadata\": ").append(Json.write(Json.parse(m.metadataJson()))).append(",\n");
        sb.append("  \"tensors\": [");
        i = 0;
        for (TensorEntry t : m.tensors()) {
            sb.append(i++ == 0 ? "\n    " : ",\n    ");
            sb.append("{\"name\":");
            Json.quote(sb, t.name());
            sb.append(",\"dtype\":\"").append(t.dtype().name()).append("\",\"shape\":[");
            long[] shape = t.shape();
            for (int d = 0; d < shape.length; d++) {
                sb.append(d == 0 ? "" : ",").append(shape[d]);
            }
            sb.append("],\"offset\":").append(t.offset()).append(",\"length\":").append(t.length())
                    .append(",\"crc32c\":\"").append(Crc.hex(t.crc32c())).append("\"}");
        }
        sb.append(i == 0 ? "],\n" : "\n  ],\n");
        sb.append("  ").append(CRC_FIELD).append(PLACEHOLDER).append(CRC_TAIL);
        byte[] bytes = sb.toString().getBytes(StandardCharsets.UTF_8);
        int at = bytes.length - CRC_TAIL.length() - PLACEHOLDER.length();
        CRC32C crc = new CRC32C();
        crc.update(bytes);
        byte[] hex = Crc.hex((int) crc.getValue()).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(hex, 0, bytes, at, hex.length);
        return bytes;
    }

    /**
     * @param location the manifest's file or key, for messages
     * @throws CorruptCheckpointException if the checksum, the JSON or any field is wrong
     */
    public static Manifest decode(byte[] bytes, String location) throws CorruptCheckpointException {
        if (bytes.length > MAX_BYTES) {
            throw new CorruptCheckpointException(location, null, "manifest is " + bytes.length + " bytes, more than "
                    + MAX_BYTES + " (not a Kolo manifest)");
        }
        String text;
        try {
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(java.nio.ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            throw new CorruptCheckpointException(location, null, "manifest is not valid UTF-8 (corrupt)");
        }
        checkCrc(bytes, text, location);
        try {
            return fields(Json.object(Json.parse(text), "manifest"), location);
        } catch (Json.JsonException | IllegalArgumentException | ArithmeticException e) {
            throw new CorruptCheckpointException(location, null, "invalid manifest: " + e.getMessage());
        }
    }

    private static void checkCrc(byte[] bytes, String text, String location) throws CorruptCheckpointException {
        if (bytes.length == 0) {
            throw new CorruptCheckpointException(location, null, "manifest is empty (truncated)");
        }
        int field = text.lastIndexOf(CRC_FIELD);
        // The checksum line is last and ASCII, so its character index equals its byte index from the end.
        if (field < 0 || !text.endsWith(CRC_TAIL)
                || text.length() - field != CRC_FIELD.length() + PLACEHOLDER.length() + CRC_TAIL.length()) {
            throw new CorruptCheckpointException(location, null,
                    "manifest does not end with its \"manifestCrc32c\" line (truncated or not a Kolo manifest)");
        }
        int at = bytes.length - CRC_TAIL.length() - PLACEHOLDER.length();
        String hex = new String(bytes, at, PLACEHOLDER.length(), StandardCharsets.US_ASCII);
        int expected;
        try {
            expected = Crc.parseHex(hex);
        } catch (NumberFormatException e) {
            throw new CorruptCheckpointException(location, null, "manifest checksum field is not 8 hex digits: \""
                    + hex + "\"");
        }
        CRC32C crc = new CRC32C();
        crc.update(bytes, 0, at);
        crc.update(PLACEHOLDER.getBytes(StandardCharsets.US_ASCII));
        crc.update(bytes, at + PLACEHOLDER.length(), bytes.length - at - PLACEHOLDER.length());
        int actual = (int) crc.getValue();
        if (actual != expected) {
            throw new CorruptCheckpointException(location, null, "manifest checksum mismatch: expected "
                    + Crc.hex(expected) + ", actual " + Crc.hex(actual));
        }
    }

    private static Manifest fields(Map<String, Object> o, String location) throws CorruptCheckpointException {
        String where = "manifest";
        String format = Json.string(o, "format", where);
        if (!Manifest.FORMAT_NAME.equals(format)) {
            throw new IllegalArgumentException("format is \"" + format + "\", expected \"" + Manifest.FORMAT_NAME + "\"");
        }
        long version = Json.integer(o, "formatVersion", where);
        if (version != Manifest.FORMAT_VERSION) {
            throw new CorruptCheckpointException(location, null, "manifest format version " + version
                    + " is not supported (this reader knows " + Manifest.FORMAT_VERSION + ")");
        }
        CheckpointId id = new CheckpointId(Json.integer(o, "step", where), Json.integer(o, "generation", where));
        String name = Json.string(o, "id", where);
        if (!name.equals(id.name())) {
            throw new IllegalArgumentException("id \"" + name + "\" does not match step " + id.step()
                    + " and generation " + id.generation());
        }
        UUID uuid = UUID.fromString(Json.string(o, "uuid", where));
        String job = Json.string(o, "job", where);
        long epoch = Json.integer(o, "epoch", where);
        long worldSize = Json.integer(o, "worldSize", where);
        if (worldSize < 1 || worldSize > Integer.MAX_VALUE || epoch < 0) {
            throw new IllegalArgumentException("worldSize " + worldSize + " or epoch " + epoch + " out of range");
        }
        Instant createdAt;
        try {
            createdAt = Instant.parse(Json.string(o, "createdAt", where));
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("createdAt is not an ISO-8601 instant");
        }
        expectString(o, "byteOrder", "little-endian");
        expectString(o, "dataFile", Manifest.DATA_FILE);
        expectInt(o, "headerBytes", Manifest.HEADER_BYTES);
        expectInt(o, "alignment", Manifest.ALIGNMENT);
        long dataBytes = Json.integer(o, "dataBytes", where);
        if (dataBytes < Manifest.HEADER_BYTES) {
            throw new IllegalArgumentException("dataBytes " + dataBytes + " is smaller than the header");
        }

        Map<String, Object> scalars = new LinkedHashMap<>();
        for (Object so : Json.array(Json.member(o, "scalars", where), "scalars")) {
            Map<String, Object> s = Json.object(so, "scalar");
            String sname = Json.string(s, "name", "scalar");
            String type = Json.string(s, "type", "scalar '" + sname + "'");
            Object v = Json.member(s, "value", "scalar '" + sname + "'");
            Object value;
            switch (type) {
                case "long":
                    value = Json.integer(s, "value", "scalar '" + sname + "'");
                    break;
                case "double":
                    value = v instanceof String str ? parseSpecialDouble(str) : ((Json.Num) numberOrFail(v, sname)).doubleValue();
                    break;
                case "string":
                    value = Json.string(s, "value", "scalar '" + sname + "'");
                    break;
                default:
                    throw new IllegalArgumentException("scalar '" + sname + "' has unknown type \"" + type + "\"");
            }
            if (scalars.put(sname, value) != null) {
                throw new IllegalArgumentException("duplicate scalar '" + sname + "'");
            }
        }
        String metadata = Json.write(Json.member(o, "metadata", where));

        List<TensorEntry> tensors = new ArrayList<>();
        Set<String> names = new HashSet<>();
        long end = Manifest.HEADER_BYTES;
        for (Object to : Json.array(Json.member(o, "tensors", where), "tensors")) {
            Map<String, Object> t = Json.object(to, "tensor");
            String tname = Json.string(t, "name", "tensor");
            String tw = "tensor '" + tname + "'";
            if (!names.add(tname)) {
                throw new IllegalArgumentException("duplicate tensor '" + tname + "'");
            }
            DType dtype;
            try {
                dtype = DType.valueOf(Json.string(t, "dtype", tw));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(tw + " has unknown dtype \"" + t.get("dtype") + "\"");
            }
            List<Object> dims = Json.array(Json.member(t, "shape", tw), tw + " shape");
            if (dims.size() > 32) {
                throw new IllegalArgumentException(tw + " has " + dims.size() + " dims (at most 32)");
            }
            long[] shape = new long[dims.size()];
            long elements = 1;
            long nonZero = 1;
            for (int d = 0; d < shape.length; d++) {
                if (!(dims.get(d) instanceof Json.Num n) || n.longValue() < 0) {
                    throw new IllegalArgumentException(tw + " has an invalid shape");
                }
                shape[d] = n.longValue();
                // Bounded like a tensor (one direct buffer), also across a zero dim.
                if (shape[d] > 0) {
                    nonZero = Math.multiplyExact(nonZero, shape[d]);
                    if (nonZero > Integer.MAX_VALUE) {
                        throw new IllegalArgumentException(tw + " shape " + dims
                                + " exceeds " + Integer.MAX_VALUE + " elements");
                    }
                }
                elements *= shape[d];
            }
            long offset = Json.integer(t, "offset", tw);
            long length = Json.integer(t, "length", tw);
            long needed = elements * dtype.byteSize(); // at most 2^31 elements of at most 8 bytes: no overflow
            if (length != needed || length > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(tw + " has length " + length + " but shape "
                        + java.util.Arrays.toString(shape) + " of " + dtype + " needs " + needed + " bytes");
            }
            // offset > dataBytes - length, not offset + length > dataBytes: a forged offset must not overflow.
            if (offset < end || offset % Manifest.ALIGNMENT != 0 || offset > dataBytes - length) {
                throw new IllegalArgumentException(tw + " has offset " + offset + " (length " + length
                        + ") outside the data file, overlapping the previous tensor or not aligned");
            }
            end = offset + length;
            int crc;
            try {
                crc = Crc.parseHex(Json.string(t, "crc32c", tw));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(tw + " crc32c: " + e.getMessage());
            }
            tensors.add(new TensorEntry(tname, dtype, shape, offset, length, crc));
        }
        return new Manifest((int) version, id, uuid, job, epoch, (int) worldSize, createdAt, dataBytes,
                scalars, metadata, tensors);
    }

    private static Object numberOrFail(Object v, String name) {
        if (v instanceof Json.Num) {
            return v;
        }
        throw new IllegalArgumentException("scalar '" + name + "' value must be a number");
    }

    private static double parseSpecialDouble(String s) {
        switch (s) {
            case "NaN": return Double.NaN;
            case "Infinity": return Double.POSITIVE_INFINITY;
            case "-Infinity": return Double.NEGATIVE_INFINITY;
            default: throw new IllegalArgumentException("double scalar value \"" + s + "\" is not a number");
        }
    }

    private static void expectString(Map<String, Object> o, String name, String expected) {
        String v = Json.string(o, name, "manifest");
        if (!expected.equals(v)) {
            throw new IllegalArgumentException(name + " is \"" + v + "\", expected \"" + expected + "\"");
        }
    }

    private static void expectInt(Map<String, Object> o, String name, long expected) {
        long v = Json.integer(o, name, "manifest");
        if (v != expected) {
            throw new IllegalArgumentException(name + " is " + v + ", expected " + expected);
        }
    }

    private static void field(StringBuilder sb, String name, Object value) {
        sb.append("  ");
        Json.quote(sb, name);
        sb.append(": ");
        Json.writeTo(sb, value);
        sb.append(",\n");
    }
}
