package dev.kolo.checkpoint.internal.format;

import dev.kolo.runtime.DType;
import java.util.Arrays;

/** One tensor of a manifest: where its bytes are in the data file and their checksum. */
public record TensorEntry(String name, DType dtype, long[] shape, long offset, long length, int crc32c) {
    public TensorEntry withCrc(int crc) {
        return new TensorEntry(name, dtype, shape, offset, length, crc);
    }

    public String shapeString() {
        return Arrays.toString(shape);
    }
}
