package dev.kolo.runtime.internal.engine.execute;

import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.control.OpSpec;
import java.nio.ByteBuffer;

/**
 * Completes a small allreduce whose data every rank sent in the agreement round itself: the round's combination
 * (the agree stage's {@code RoundRule}) already reduced the ranks' prescaled data, the same on every rank; what is left is the
 * postscale (see {@link AverageScaling}) into the op's output.
 */
public final class EagerReduction {
    private final Reducer reducer;
    private final int size;

    public EagerReduction(Reducer reducer, int size) {
        this.reducer = reducer;
        this.size = size;
    }

    /**
     * @param combined the round's combined message; the op's reduced data begins at {@code at}
     * @param out where the result goes, at offset 0
     */
    void finish(OpSpec spec, ByteBuffer combined, int at, ByteBuffer out) {
        int bytes = (int) spec.byteSize();
        if (bytes == 0) {
            return;
        }
        out.put(0, combined, at, bytes);
        double finalScale = AverageScaling.postscale(spec, size);
        if (finalScale != 1.0) {
            reducer.scale(spec.dtype, out, 0, (int) spec.numElements(), finalScale);
        }
    }
}
