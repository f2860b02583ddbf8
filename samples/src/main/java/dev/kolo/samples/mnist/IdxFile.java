package dev.kolo.samples.mnist;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.zip.GZIPInputStream;

/**
 * An IDX file of unsigned bytes (the MNIST format): magic {@code 0x00 0x00 0x08 D}, then D big-endian
 * 32-bit dimensions, then the elements row-major. Gzipped files are recognised by their content, not
 * their name.
 */
record IdxFile(int[] dims, byte[] data) {
    private static final int UNSIGNED_BYTE = 0x08;

    /** @return the number of items (the first dimension) */
    int count() {
        return dims[0];
    }

    /** @return the elements per item (product of the other dimensions) */
    int itemSize() {
        int n = 1;
        for (int i = 1; i < dims.length; i++) {
            n *= dims[i];
        }
        return n;
    }

    /**
     * @throws IOException naming the file if it is unreadable, not IDX, not unsigned bytes, truncated or
     *                     longer than its header says
     */
    static IdxFile read(Path file) throws IOException {
        try (InputStream raw = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
            raw.mark(2);
            boolean gzip = raw.read() == 0x1f && raw.read() == 0x8b;
            raw.reset();
            try (DataInputStream in = new DataInputStream(gzip ? new BufferedInputStream(new GZIPInputStream(raw,
                    1 << 16), 1 << 16) : raw)) {
                return parse(file, in);
            }
        }
    }

    private static IdxFile parse(Path file, DataInputStream in) throws IOException {
        int magic;
        try {
            magic = in.readInt();
        } catch (EOFException e) {
            throw new IOException(file + " is not an IDX file: shorter than its 4-byte magic number");
        }
        int nDims = magic & 0xff;
        if ((magic >>> 16) != 0 || nDims < 1 || nDims > 4) {
            throw new IOException(String.format("%s is not an IDX file: bad magic number 0x%08x (expected "
                    + "0x00000801 for labels or 0x00000803 for images)", file, magic));
        }
        if (((magic >>> 8) & 0xff) != UNSIGNED_BYTE) {
            throw new IOException(String.format("%s: IDX element type 0x%02x is not supported (only unsigned "
                    + "bytes, 0x08)", file, (magic >>> 8) & 0xff));
        }
        int[] dims = new int[nDims];
        long total = 1;
        try {
            for (int i = 0; i < nDims; i++) {
                dims[i] = in.readInt();
                if (dims[i] < 0) {
                    throw new IOException(file + ": negative dimension in IDX header");
                }
                total *= dims[i];
            }
        } catch (EOFException e) {
            throw new IOException(file + ": IDX header truncated");
        }
        if (total > Integer.MAX_VALUE - 8) {
            throw new IOException(file + ": IDX dimensions " + Arrays.toString(dims) + " are too large");
        }
        byte[] data = new byte[(int) total];
        int read = in.readNBytes(data, 0, data.length);
        if (read < data.length) {
            throw new IOException(file + " is truncated: header " + Arrays.toString(dims) + " needs " + total
                    + " bytes of data but only " + read + " follow");
        }
        if (in.read() != -1) {
            throw new IOException(file + " has data beyond the " + total + " bytes its header "
                    + Arrays.toString(dims) + " describes");
        }
        return new IdxFile(dims, data);
    }
}
