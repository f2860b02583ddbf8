package dev.kolo.samples.mnist;

import dev.kolo.runtime.train.Parameter;
import java.util.List;

/** FNV-1a (64-bit) over the exact bits of every parameter, in order: equal iff the models are bit-identical. */
final class ParameterChecksum {
    private ParameterChecksum() {
    }

    static long of(List<Parameter> parameters) {
        long h = 0xcbf29ce484222325L;
        for (Parameter p : parameters) {
            for (float v : p.values()) {
                int bits = Float.floatToRawIntBits(v);
                for (int i = 0; i < 4; i++) {
                    h ^= (bits >>> (8 * i)) & 0xff;
                    h *= 0x100000001b3L;
                }
            }
        }
        return h;
    }

    static String hex(long checksum) {
        return String.format("%016x", checksum);
    }
}
