package dev.kolo.samples.cli;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.Tensor;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes a tensor as a NumPy {@code .npy} file (format 1.0), which NumPy, PyTorch (via NumPy) and DJL read: the
 * magic, a header naming the element type and shape, then the elements little-endian in row-major order.
 * bfloat16, which NumPy lacks, is written as float32 (exactly: bfloat16 is the upper half of a float32).
 */
final class NpyExport {
    private static final byte[] MAGIC = {(byte) 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0};
    /** The header is padded so that the data starts at a multiple of this (NumPy's alignment). */
    private static final int ALIGN = 64;

    private NpyExport() {
    }

    static void write(Tensor t, Path file) throws IOException {
        boolean widen = t.dtype() == DType.BFLOAT16;
        String header = "{'descr': '" + descr(widen ? DType.FLOAT32 : t.dtype()) + "', 'fortran_order': False, "
                + "'shape': " + shape(t.shape()) + ", }";
        int unpadded = MAGIC.length + 2 + header.length() + 1;
        int padded = (unpadded + ALIGN - 1) / ALIGN * ALIGN;
        String line = header + " ".repeat(padded - unpadded) + "\n";
        try (OutputStream out = Files.newOutputStream(file)) {
            out.write(MAGIC);
            out.write(line.length() & 0xff);
            out.write(line.length() >>> 8);
            out.write(line.getBytes(StandardCharsets.US_ASCII));
            ByteBuffer data;
            if (widen) {
                float[] values = t.toFloatArray();
                data = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
                data.asFloatBuffer().put(values);
            } else {
                data = t.buffer().duplicate();
            }
            Channels.newChannel(out).write(data);
        }
    }

    static String descr(DType d) {
        return switch (d) {
            case FLOAT32 -> "<f4";
            case FLOAT64 -> "<f8";
            case FLOAT16 -> "<f2";
            case INT8 -> "|i1";
            case UINT8 -> "|u1";
            case INT32 -> "<i4";
            case INT64 -> "<i8";
            case BFLOAT16 -> throw new IllegalArgumentException("bfloat16 has no NumPy type: widen it to float32");
        };
    }

    private static String shape(long[] dims) {
        StringBuilder sb = new StringBuilder("(");
        for (int i = 0; i < dims.length; i++) {
            sb.append(dims[i]).append(dims.length == 1 ? "," : i < dims.length - 1 ? ", " : "");
        }
        return sb.append(')').toString();
    }

    /** A file name for a tensor name: characters a file system may refuse become '_', and no hidden file. */
    static String fileName(String tensor) {
        String safe = tensor.replaceAll("[^A-Za-z0-9._-]", "_");
        return (safe.isEmpty() || safe.startsWith(".") ? "_" + safe : safe) + ".npy";
    }
}
