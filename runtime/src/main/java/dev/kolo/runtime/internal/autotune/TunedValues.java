package dev.kolo.runtime.internal.autotune;

/**
 * One setting of the tuned knobs.
 *
 * @param fusionThreshold largest fused allreduce of a cached step, bytes (0: no fusion)
 * @param eagerOpBytes largest allreduce whose data rides in the agreement round, bytes (0: none)
 * @param cycleMicros how long the coordinator batches ready tensors while others are half-submitted, microseconds
 */
public record TunedValues(int fusionThreshold, int eagerOpBytes, int cycleMicros) {
    public TunedValues {
        if (fusionThreshold < 0 || eagerOpBytes < 0 || cycleMicros < 0) {
            throw new IllegalArgumentException("tuned values are never negative: " + this);
        }
    }

    /** @return the value of knob {@code k} */
    int get(Knob k) {
        return switch (k) {
            case FUSION_THRESHOLD -> fusionThreshold;
            case EAGER_OP_BYTES -> eagerOpBytes;
            case CYCLE_TIME -> cycleMicros;
        };
    }

    /** @return these values with knob {@code k} set to {@code v} */
    TunedValues with(Knob k, int v) {
        return switch (k) {
            case FUSION_THRESHOLD -> new TunedValues(v, eagerOpBytes, cycleMicros);
            case EAGER_OP_BYTES -> new TunedValues(fusionThreshold, v, cycleMicros);
            case CYCLE_TIME -> new TunedValues(fusionThreshold, eagerOpBytes, v);
        };
    }

    @Override
    public String toString() {
        return "fusion threshold " + fusionThreshold + " bytes, eager size " + eagerOpBytes + " bytes, cycle time "
                + cycleMicros / 1000.0 + " ms";
    }
}
