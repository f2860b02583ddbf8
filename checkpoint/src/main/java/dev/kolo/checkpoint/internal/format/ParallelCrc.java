package dev.kolo.checkpoint.internal.format;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * CRC32C of many buffers at once: each buffer is cut into pieces, the pieces are checksummed in
 * parallel and the piece checksums combined ({@link #combine}), so one huge tensor uses every core too.
 */
final class ParallelCrc {
    static final int PIECE = 8 << 20;
    /** Reflected CRC-32C (Castagnoli) polynomial. */
    private static final int POLY = 0x82F63B78;

    private ParallelCrc() {
    }

    /** @return the CRC32C of the remaining bytes of each buffer (positions are not moved) */
    static int[] of(List<ByteBuffer> buffers, Duration timeout) {
        List<int[]> pieces = new ArrayList<>(); // {buffer index, piece start}
        for (int b = 0; b < buffers.size(); b++) {
            int len = buffers.get(b).remaining();
            if (len == 0) {
                pieces.add(new int[] {b, 0});
            }
            for (int start = 0; start < len; start += PIECE) {
                pieces.add(new int[] {b, start});
            }
        }
        int[] pieceCrc = new int[pieces.size()];
        Parallel.forEach(pieces.size(), i -> {
            int[] p = pieces.get(i);
            ByteBuffer buf = buffers.get(p[0]).duplicate();
            int base = buf.position();
            int end = Math.min(buf.limit(), base + p[1] + PIECE);
            buf.limit(end).position(base + p[1]);
            CRC32C crc = new CRC32C();
            crc.update(buf);
            pieceCrc[i] = (int) crc.getValue();
        }, timeout);
        int[] out = new int[buffers.size()];
        int prev = -1;
        for (int i = 0; i < pieces.size(); i++) {
            int b = pieces.get(i)[0];
            if (b != prev) {
                out[b] = pieceCrc[i];
                prev = b;
            } else {
                int len = Math.min(PIECE, buffers.get(b).remaining() - pieces.get(i)[1]);
                out[b] = combine(out[b], pieceCrc[i], len);
            }
        }
        return out;
    }

    /**
     * @return the CRC32C of A followed by B, given {@code crcA}, {@code crcB} and B's length (the zlib
     *     {@code crc32_combine} method, with the Castagnoli polynomial)
     */
    static int combine(int crcA, int crcB, long lengthB) {
        if (lengthB <= 0) {
            return crcA;
        }
        int[] even = new int[32];
        int[] odd = new int[32];
        odd[0] = POLY; // operator for one zero bit
        int row = 1;
        for (int n = 1; n < 32; n++) {
            odd[n] = row;
            row <<= 1;
        }
        square(even, odd); // two zero bits
        square(odd, even); // four zero bits
        int crc = crcA;
        long len = lengthB;
        do {
            square(even, odd);
            if ((len & 1) != 0) {
                crc = times(even, crc);
            }
            len >>>= 1;
            if (len == 0) {
                break;
            }
            square(odd, even);
            if ((len & 1) != 0) {
                crc = times(odd, crc);
            }
            len >>>= 1;
        } while (len != 0);
        return crc ^ crcB;
    }

    private static int times(int[] mat, int vec) {
        int sum = 0;
        for (int i = 0; vec != 0; i++, vec >>>= 1) {
            if ((vec & 1) != 0) {
                sum ^= mat[i];
            }
        }
        return sum;
    }

    private static void square(int[] square, int[] mat) {
        for (int n = 0; n < 32; n++) {
            square[n] = times(mat, mat[n]);
        }
    }
}
