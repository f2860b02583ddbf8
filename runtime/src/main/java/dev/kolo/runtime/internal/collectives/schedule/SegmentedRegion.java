package dev.kolo.runtime.internal.collectives.schedule;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.transport.FrameReader;
import dev.kolo.runtime.internal.transport.FrameWriter;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Several buffers one after the other, each from its byte 0: segment s holds the logical bytes
 * {@code [start(s), start(s) + length(s))}. A frame that spans segments is sent with one gathering write and
 * received with one scattering read; a reduction or scaling is done piece by piece. Each segment comes with
 * two views, for the writer and for the reader (and the arithmetic), which the caller owns and keeps for it.
 */
public final class SegmentedRegion extends Region {
    private ByteBuffer[] sendViews;
    private ByteBuffer[] views;
    private int[] starts = new int[8];
    private int segments;

    /**
     * @param lengths bytes of each segment, each a whole number of elements
     * @return the total length in bytes
     */
    public long of(ByteBuffer[] sendViews, ByteBuffer[] views, int[] lengths, int segments) {
        this.sendViews = sendViews;
        this.views = views;
        this.segments = segments;
        if (starts.length < segments + 1) {
            starts = new int[Math.max(segments + 1, 2 * starts.length)];
        }
        long total = 0;
        for (int s = 0; s < segments; s++) {
            starts[s] = (int) total;
            total += lengths[s];
            if (total > Integer.MAX_VALUE) {
                throw new IllegalArgumentException("segments of more than " + Integer.MAX_VALUE + " bytes in all");
            }
        }
        starts[segments] = (int) total;
        return total;
    }

    /** The segment holding logical byte {@code at} (the last one that starts at or before it). */
    private int segmentOf(int at) {
        int i = Arrays.binarySearch(starts, 0, segments, at);
        if (i < 0) {
            return -i - 2;
        }
        while (i + 1 < segments && starts[i + 1] == at) {
            i++; // skip empty segments that start here
        }
        return i;
    }

    @Override
    void send(FrameWriter w, long generation, long seq, int chunk, int from, int to) {
        w.beginSlices(generation, seq, chunk, to - from);
        for (int s = segmentOf(from), at = from; at < to; s++) {
            int end = Math.min(to, starts[s + 1]);
            if (end > at) {
                w.slice(sendViews[s], at - starts[s], end - at);
                at = end;
            }
        }
    }

    @Override
    void receive(FrameReader r, int from, int to) {
        r.beginSlices(to - from);
        for (int s = segmentOf(from), at = from; at < to; s++) {
            int end = Math.min(to, starts[s + 1]);
            if (end > at) {
                r.slice(views[s], at - starts[s], end - at);
                at = end;
            }
        }
    }

    @Override
    void reduce(Reducer reducer, DType dtype, ReduceOp op, int from, int to, ByteBuffer src, int srcOffset) {
        src.clear();
        int size = dtype.byteSize();
        for (int s = segmentOf(from), at = from; at < to; s++) {
            int end = Math.min(to, starts[s + 1]);
            if (end > at) {
                views[s].clear();
                reducer.reduce(dtype, op, views[s], at - starts[s], src, srcOffset + at - from, (end - at) / size);
                at = end;
            }
        }
    }

    @Override
    public void scale(Reducer reducer, DType dtype, int from, int to, double factor) {
        int size = dtype.byteSize();
        for (int s = segmentOf(from), at = from; at < to; s++) {
            int end = Math.min(to, starts[s + 1]);
            if (end > at) {
                views[s].clear();
                reducer.scale(dtype, views[s], at - starts[s], (end - at) / size, factor);
                at = end;
            }
        }
    }

    /** Keeps no reference to the caller's buffers between ops. */
    public void clear() {
        sendViews = null;
        views = null;
    }
}
