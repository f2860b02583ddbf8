package dev.kolo.runtime.internal.autotune;

import java.util.List;

/**
 * The knobs the tuner turns, in the order it tunes them (the one that moves a step's time most first), each with
 * the values it tries. The values span what is worth trying on CPU clusters: fusion from 1 MiB (many batches,
 * early starts) to 256 MiB (one buffer for a ResNet-50 step); eager sizes from none to the 64 KiB a round of two
 * ranks carries; cycle times from none to 10 ms.
 */
enum Knob {
    FUSION_THRESHOLD("fusion_threshold_bytes", List.of(1 << 20, 4 << 20, 16 << 20, 32 << 20, 64 << 20, 128 << 20,
            256 << 20)),
    EAGER_OP_BYTES("eager_op_bytes", List.of(0, 8 << 10, 16 << 10, 32 << 10, 64 << 10)),
    CYCLE_TIME("cycle_time_us", List.of(0, 500, 1000, 2500, 5000, 10_000));

    final String column;
    final List<Integer> candidates;

    Knob(String column, List<Integer> candidates) {
        this.column = column;
        this.candidates = candidates;
    }
}
