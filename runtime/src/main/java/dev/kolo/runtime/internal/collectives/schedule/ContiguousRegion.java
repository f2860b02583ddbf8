package dev.kolo.runtime.internal.collectives.schedule;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.transport.FrameReader;
import dev.kolo.runtime.internal.transport.FrameWriter;
import java.nio.ByteBuffer;

/**
 * One buffer, logical offset = byte offset in it. Two views of it: the writer and the reader move their
 * cursors independently (a rank sends one block while it receives another).
 */
public final class ContiguousRegion extends Region {
    private ByteBuffer sendView;
    private ByteBuffer view;

    public ContiguousRegion of(ByteBuffer sendView, ByteBuffer view) {
        this.sendView = sendView;
        this.view = view;
        return this;
    }

    @Override
    void send(FrameWriter w, long generation, long seq, int chunk, int from, int to) {
        w.begin(generation, seq, chunk, sendView, from, to - from);
    }

    @Override
    void receive(FrameReader r, int from, int to) {
        r.begin(view, from, to - from);
    }

    @Override
    void reduce(Reducer reducer, DType dtype, ReduceOp op, int from, int to, ByteBuffer src, int srcOffset) {
        view.clear(); // the reader left its cursors on a chunk; absolute accesses are checked against the limit
        src.clear();
        reducer.reduce(dtype, op, view, from, src, srcOffset, (to - from) / dtype.byteSize());
    }

    @Override
    public void scale(Reducer reducer, DType dtype, int from, int to, double factor) {
        view.clear();
        reducer.scale(dtype, view, from, (to - from) / dtype.byteSize(), factor);
    }

    /**
     * Points this region at {@code other}'s buffer through views of its own, so that a schedule running beside one on
     * {@code other} moves cursors of its own. The views are made once per buffer (a fusion buffer's: once).
     */
    public ContiguousRegion viewsOf(ContiguousRegion other) {
        if (other.view != source) {
            source = other.view;
            sendView = other.view.duplicate().order(other.view.order());
            view = other.view.duplicate().order(other.view.order());
        }
        return this;
    }

    /** The view {@link #viewsOf} last duplicated. */
    private ByteBuffer source;

    public void clear() {
        sendView = null;
        view = null;
        source = null;
    }
}
