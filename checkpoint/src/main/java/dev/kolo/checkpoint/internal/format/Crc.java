package dev.kolo.checkpoint.internal.format;

import java.nio.ByteBuffer;
import java.util.zip.CRC32C;

/** CRC32C helpers. */
public final class Crc {
    private Crc() {
    }

    /** @return CRC32C of the remaining bytes of {@code b} (its position is not moved) */
    public static int of(ByteBuffer b) {
        CRC32C crc = new CRC32C();
        crc.update(b.duplicate());
        return (int) crc.getValue();
    }

    /** @return the checksum as 8 lowercase hex digits, e.g. {@code 0a1b2c3d} */
    public static String hex(int crc) {
        return String.format("%08x", crc);
    }

    /** @return the value of 8 hex digits */
    static int parseHex(String hex) {
        if (hex.length() != 8) {
            throw new NumberFormatException("a CRC32C is 8 hex digits, found \"" + hex + "\"");
        }
        return (int) Long.parseLong(hex, 16);
    }
}
