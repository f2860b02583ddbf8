package dev.kolo.samples.mnist;

import dev.kolo.runtime.train.Parameter;
import java.util.List;

/**
 * FNV-1a (64-bit) over the exact bits of every parameter and then every buffer, in order: equal iff the models are
 * bit-identical.
 */
final class ParameterChecksum {
    private ParameterChecksum() {
    }

    static long of(SampleModel model) {
        return of(model.parameters(), model.bufferValues());
    }

    static long of(List<Parameter> parameters, float[] buffers) {
        long h = 0xcbf29ce484222325L;
        for (Parameter p : parameters) {
            h = add(h, p.values());
        }
        return add(h, buffers);
    }

    private static long add(long h, float[] values) {
        for (float v : values) {
            int bits = Float.floatToRawIntBits(v);
            for (int i = 0; i < 4; i++) {
                h ^= (bits >>> (8 * i)) & 0xff;
                h *= 0x100000001b3L;
            }
        }
        return h;
    }

    static String hex(long checksum) {
        return String.format("%016x", checksum);
    }
}
