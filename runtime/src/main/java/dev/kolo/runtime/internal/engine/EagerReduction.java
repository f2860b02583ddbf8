package dev.kolo.runtime.internal.engine;

import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.control.OpSpec;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Completes a small allreduce whose data every rank sent in the agreement round itself: each rank reduces the
 * same n vectors in rank order 0..n-1 (each scaled by the prescale first, as a sender on the data plane would),
 * so every rank ends with the same bytes, the same bytes the data plane's direct exchange gives.
 */
final class EagerReduction {
    private final Reducer reducer;
    private final int size;
    private final ByteBuffer scratch;

    EagerReduction(Reducer reducer, int size) {
        this.reducer = reducer;
        this.size = size;
        this.scratch = ByteBuffer.allocateDirect(RoundMessage.eagerOpBytes(size)).order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * @param vectors rank r's data is {@code vectors[r]} at {@code offsets[r]} (the round's buffers)
     * @param out where the result goes, at offset 0; none of the vectors
     */
    void reduce(OpSpec spec, ByteBuffer[] vectors, int[] offsets, ByteBuffer out) {
        int count = (int) spec.numElements();
        int bytes = (int) spec.byteSize();
        if (bytes == 0) {
            return;
        }
        // The same scales as the data plane's exchange (see AverageScaling), so both give the same bytes.
        double prescale = AverageScaling.prescale(spec, size);
        out.put(0, vectors[0], offsets[0], bytes);
        if (prescale != 1.0) {
            reducer.scale(spec.dtype, out, 0, count, prescale);
        }
        for (int r = 1; r < size; r++) {
            ByteBuffer v = vectors[r];
            int at = offsets[r];
            if (prescale != 1.0) {
                scratch.put(0, v, at, bytes);
                reducer.scale(spec.dtype, scratch, 0, count, prescale);
                v = scratch;
                at = 0;
            }
            reducer.reduce(spec.dtype, AverageScaling.sumOp(spec), out, 0, v, at, count);
        }
        double finalScale = AverageScaling.postscale(spec, size);
        if (finalScale != 1.0) {
            reducer.scale(spec.dtype, out, 0, count, finalScale);
        }
    }
}
