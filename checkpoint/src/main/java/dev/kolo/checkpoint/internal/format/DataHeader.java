package dev.kolo.checkpoint.internal.format;

import dev.kolo.checkpoint.CorruptCheckpointException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * The 64-byte header at the start of a data file (little-endian):
 * <pre>
 *  0  8  magic "KOLOCKPT"
 *  8  4  format version
 * 12  4  header size (64)
 * 16  8  step
 * 24  8  generation
 * 32 16  checkpoint uuid (most, then least significant 64 bits)
 * 48  8  data file size in bytes
 * 56  4  tensor count
 * 60  4  CRC32C of bytes 0..59
 * </pre>
 */
public final class DataHeader {
    static final int SIZE = 64;
    private static final byte[] MAGIC = "KOLOCKPT".getBytes(StandardCharsets.US_ASCII);

    private DataHeader() {
    }

    public static ByteBuffer encode(Manifest m) {
        ByteBuffer b = ByteBuffer.allocateDirect(SIZE).order(ByteOrder.LITTLE_ENDIAN);
        b.put(MAGIC);
        b.putInt(Manifest.FORMAT_VERSION);
        b.putInt(SIZE);
        b.putLong(m.id().step());
        b.putLong(m.id().generation());
        b.putLong(m.uuid().getMostSignificantBits());
        b.putLong(m.uuid().getLeastSignificantBits());
        b.putLong(m.dataBytes());
        b.putInt(m.tensors().size());
        CRC32C crc = new CRC32C();
        crc.update(b.duplicate().flip());
        b.putInt((int) crc.getValue());
        return b.flip();
    }

    /** Checks {@code header} (64 bytes) against the manifest it must belong to. */
    static void verify(ByteBuffer header, Manifest m, String location) throws CorruptCheckpointException {
        ByteBuffer b = header.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        byte[] magic = new byte[MAGIC.length];
        b.get(0, magic);
        if (!java.util.Arrays.equals(magic, MAGIC)) {
            throw new CorruptCheckpointException(location, null, "not a Kolo checkpoint data file (bad magic)");
        }
        CRC32C crc = new CRC32C();
        crc.update(b.duplicate().position(0).limit(60));
        int expected = b.getInt(60);
        int actual = (int) crc.getValue();
        if (expected != actual) {
            throw new CorruptCheckpointException(location, null, "data file header checksum mismatch: expected "
                    + Crc.hex(expected) + ", actual " + Crc.hex(actual));
        }
        int version = b.getInt(8);
        if (version != Manifest.FORMAT_VERSION) {
            throw new CorruptCheckpointException(location, null, "data file format version " + version
                    + " is not supported (this reader knows " + Manifest.FORMAT_VERSION + ")");
        }
        UUID uuid = new UUID(b.getLong(32), b.getLong(40));
        if (!uuid.equals(m.uuid())) {
            throw new CorruptCheckpointException(location, null, "data file belongs to another checkpoint: uuid "
                    + uuid + ", manifest expects " + m.uuid());
        }
        long step = b.getLong(16);
        long gen = b.getLong(24);
        long size = b.getLong(48);
        int count = b.getInt(56);
        if (step != m.id().step() || gen != m.id().generation() || size != m.dataBytes()
                || count != m.tensors().size()) {
            throw new CorruptCheckpointException(location, null, "data file header (step " + step + ", generation "
                    + gen + ", " + size + " bytes, " + count + " tensors) does not match the manifest (step "
                    + m.id().step() + ", generation " + m.id().generation() + ", " + m.dataBytes() + " bytes, "
                    + m.tensors().size() + " tensors)");
        }
    }
}
