package dev.kolo.checkpoint;

import dev.kolo.checkpoint.internal.format.Crc;
import java.nio.charset.StandardCharsets;
import java.util.zip.CRC32C;

/** Test helper: gives an edited manifest a correct checksum, so the decoder's field checks are reached. */
public final class Reseal {
    private static final byte[] TAIL = "\"\n}\n".getBytes(StandardCharsets.US_ASCII);

    private Reseal() {
    }

    /** @return {@code bytes} with its checksum digits recomputed, or unchanged if it has no checksum line */
    public static byte[] manifest(byte[] bytes) {
        int at = bytes.length - TAIL.length - 8;
        if (at < 0) {
            return bytes;
        }
        for (int i = 0; i < TAIL.length; i++) {
            if (bytes[bytes.length - TAIL.length + i] != TAIL[i]) {
                return bytes;
            }
        }
        byte[] out = bytes.clone();
        byte[] zeros = "00000000".getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(zeros, 0, out, at, 8);
        CRC32C crc = new CRC32C();
        crc.update(out);
        System.arraycopy(Crc.hex((int) crc.getValue()).getBytes(StandardCharsets.US_ASCII), 0, out, at, 8);
        return out;
    }

    /** @return the manifest text with {@code from} replaced by {@code to}, resealed */
    public static byte[] edit(byte[] manifest, String from, String to) {
        String text = new String(manifest, StandardCharsets.UTF_8);
        if (!text.contains(from)) {
            throw new IllegalArgumentException("manifest has no " + from + ":\n" + text);
        }
        return manifest(text.replace(from, to).getBytes(StandardCharsets.UTF_8));
    }
}
