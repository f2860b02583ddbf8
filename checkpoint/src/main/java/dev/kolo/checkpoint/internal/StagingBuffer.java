package dev.kolo.checkpoint.internal;

import dev.kolo.checkpoint.internal.format.Manifest;
import dev.kolo.checkpoint.internal.format.Parallel;
import dev.kolo.runtime.Tensor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Off-heap memory an asynchronous save copies the state into, so training can modify its tensors while
 * the copy is written. Kept between saves and reused while the state fits; it grows (never shrinks) when
 * the state does. Tensors are packed at 64-byte aligned offsets into segments of at most 1 GiB (a larger
 * tensor gets a segment of its own, up to the 2 GiB tensor limit). Not thread-safe: the saver uses it for
 * one snapshot at a time.
 */
final class StagingBuffer {
    private static final long SEGMENT = 1L << 30;
    private static final int COPY_PIECE = 4 << 20;

    private final long maxSegment;
    private final List<ByteBuffer> segments = new ArrayList<>();

    StagingBuffer() {
        this(SEGMENT);
    }

    StagingBuffer(long maxSegment) {
        this.maxSegment = maxSegment;
    }

    /** @return the bytes of off-heap memory held */
    long capacity() {
        long n = 0;
        for (ByteBuffer b : segments) {
            n += b.capacity();
        }
        return n;
    }

    /**
     * Copies the tensors' bytes into the buffer, using the calling thread and idle cores.
     *
     * @return for each tensor in order, a slice of the buffer holding a copy of its bytes
     */
    List<ByteBuffer> stage(Collection<Tensor> tensors, Duration timeout) {
        // Plan: segment index and offset of every tensor, and each segment's needed size.
        int n = tensors.size();
        int[] segOf = new int[n];
        long[] offsetOf = new long[n];
        List<Long> needed = new ArrayList<>();
        long used = 0;
        long limit = maxSegment;
        int i = 0;
        for (Tensor t : tensors) {
            long len = t.byteSize();
            long at = Manifest.align(used);
            if (needed.isEmpty() || at + len > limit) {
                needed.add(0L);
                at = 0;
                limit = Math.max(maxSegment, len);
            }
            int seg = needed.size() - 1;
            segOf[i] = seg;
            offsetOf[i] = at;
            used = at + len;
            needed.set(seg, used);
            i++;
        }
        ensureCapacity(needed);

        List<ByteBuffer> sources = new ArrayList<>(n);
        List<ByteBuffer> slices = new ArrayList<>(n);
        i = 0;
        for (Tensor t : tensors) {
            sources.add(t.buffer());
            slices.add(segments.get(segOf[i]).slice((int) offsetOf[i], (int) t.byteSize())
                    .order(ByteOrder.LITTLE_ENDIAN));
            i++;
        }
        // Copy in pieces so idle cores can share a big tensor.
        List<int[]> pieces = new ArrayList<>();
        for (int t = 0; t < n; t++) {
            int len = slices.get(t).remaining();
            for (int start = 0; start < len; start += COPY_PIECE) {
                pieces.add(new int[] {t, start, Math.min(COPY_PIECE, len - start)});
            }
        }
        Parallel.forEach(pieces.size(), p -> {
            int[] piece = pieces.get(p);
            ByteBuffer src = sources.get(piece[0]).duplicate();
            src.position(piece[1]).limit(piece[1] + piece[2]);
            slices.get(piece[0]).duplicate().position(piece[1]).put(src);
        }, timeout);
        return slices;
    }

    private void ensureCapacity(List<Long> needed) {
        boolean fits = segments.size() >= needed.size();
        for (int s = 0; fits && s < needed.size(); s++) {
            fits = segments.get(s).capacity() >= needed.get(s);
        }
        if (fits) {
            return;
        }
        segments.clear(); // the old memory is freed when collected
        for (long size : needed) {
            // Grow with headroom so a state that grows a little does not reallocate every save.
            long cap = Math.min(Math.max(size, size + size / 8), Math.max(maxSegment, size));
            segments.add(ByteBuffer.allocateDirect((int) Math.min(cap, Integer.MAX_VALUE))
                    .order(ByteOrder.LITTLE_ENDIAN));
        }
    }
}
