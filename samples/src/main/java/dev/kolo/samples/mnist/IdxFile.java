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
    /** The most elements a file may hold: they go into one byte array. */
    static final long MAX_ELEMENTS = Integer.MAX_VALUE - 8;

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
        try (InputStream raw = Files.newInputStream(file)) {
            return read(file.toString(), raw);
        }
    }

    /**
     * Reads an IDX file (gzipped or not) from {@code raw}; {@code name} is used in messages. Memory grows with
     * the bytes actually read, never with what the header claims.
     *
     * @throws IOException naming {@code name} if it is not IDX, not unsigned bytes, truncated or longer than its
     *                     header says
     */
    static IdxFile read(String name, InputStream raw) throws IOException {
        InputStream in = new BufferedInputStream(raw, 1 << 16);
        in.mark(2);
        boolean gzip = in.read() == 0x1f && in.read() == 0x8b;
        in.reset();
        try (DataInputStream data = new DataInputStream(gzip ? new BufferedInputStream(new GZIPInputStream(in,
                1 << 16), 1 << 16) : in)) {
            return parse(name, data);
        }
    }

    private static IdxFile parse(String file, DataInputStream in) throws IOException {
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
        try {
            for (int i = 0; i < nDims; i++) {
                dims[i] = in.readInt();
                if (dims[i] < 0) {
                    throw new IOException(file + ": negative dimension in IDX header");
                }
            }
        } catch (EOFException e) {
            throw new IOException(file + ": IDX header truncated");
        }
        // Each partial product must fit, also after a zero dim: itemSize() multiplies all dims but the first.
        long total = dims[0];
        long item = 1;
        for (int i = 1; i < nDims; i++) {
            item *= dims[i];
            if (item > MAX_ELEMENTS) {
                break;
            }
        }
        if (item > MAX_ELEMENTS || (item > 0 && total > MAX_ELEMENTS / item)) {
            throw new IOException(file + ": IDX dimensions " + Arrays.toString(dims) + " are too large (at most "
                    + MAX_ELEMENTS + " elements)");
        }
        total *= item;
        // readNBytes grows its buffer as data arrives: a header promising 2 GB over a short file costs nothing.
        byte[] data = in.readNBytes((int) total);
        if (data.length < total) {
            throw new IOException(file + " is truncated: header " + Arrays.toString(dims) + " needs " + total
                    + " bytes of data but only " + data.length + " follow");
        }
        if (in.read() != -1) {
            throw new IOException(file + " has data beyond the " + total + " bytes its header "
                    + Arrays.toString(dims) + " describes");
        }
        return new IdxFile(dims, data);
    }
}
