package dev.kolo.checkpoint;

import dev.kolo.runtime.DType;
import java.util.Arrays;

/** One tensor of a manifest: where its bytes are in the data file and their checksum. */
record TensorEntry(String name, DType dtype, long[] shape, long offset, long length, int crc32c) {
    TensorEntry withCrc(int crc) {
        return new TensorEntry(name, dtype, shape, offset, length, crc);
    }

    String shapeString() {
        return Arrays.toString(shape);
    }
}
