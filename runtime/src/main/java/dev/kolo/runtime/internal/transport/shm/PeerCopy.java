package dev.kolo.runtime.internal.transport.shm;

import dev.kolo.kernels.Kernels;
import java.nio.ByteBuffer;

/**
 * How a ring's writer copies bytes in for the co-located peer. Pieces of at least {@code streamFromBytes} from direct
 * buffers go past the writer's caches ({@link Kernels#copyForPeer}) always, never, or while that costs the two sides
 * less ({@link StreamingChoice}, the default); everything else is copied plainly.
 *
 * <p>Why: plainly copied lines move between the writer's and the reader's caches at the speed of the path between the
 * two cores, and on a virtual machine that path changes with where the host runs the two virtual CPUs, from run to
 * run and for seconds within a run: a 1 MiB hand-off between two processes took 100 us in one placement and 470-600
 * us in another, while the same hand-off with streaming stores took 78-98 us in both. Where the cores share a cache a
 * plain copy is faster, and below a few tens of KiB always, so small frames, headers and notices keep it.
 */
public final class PeerCopy {
    /** When large pieces are streamed ({@code KOLO_SHM_STREAM}). */
    public enum Mode {
        /** While it costs less. */
        AUTO,
        /** Every large piece. */
        ALWAYS,
        /** None. */
        NEVER;

        /** @return the mode a setting's value names ({@code auto}, {@code always}, {@code never}) */
        public static Mode of(String value) {
            return valueOf(value.toUpperCase(java.util.Locale.ROOT));
        }
    }

    private final Kernels kernels;
    private final Mode mode;
    private final int streamFromBytes;

    /**
     * @param kernels the process's kernels (the Java ones copy plainly)
     * @param mode when large pieces are streamed
     * @param streamFromBytes smallest piece that may be streamed past the cache (a large piece)
     */
    public PeerCopy(Kernels kernels, Mode mode, int streamFromBytes) {
        if (streamFromBytes < 1) {
            throw new IllegalArgumentException("streamFromBytes must be 1 or more: " + streamFromBytes);
        }
        this.kernels = kernels;
        this.mode = mode;
        this.streamFromBytes = streamFromBytes;
    }

    /** @return a copy that never streams */
    public static PeerCopy plain() {
        return new PeerCopy(Kernels.java(), Mode.NEVER, Integer.MAX_VALUE);
    }

    /** @return the smallest copy timed for the choice of way; 0 when there is no choice to make */
    int timedFromBytes() {
        return mode == Mode.AUTO ? streamFromBytes : 0;
    }

    /**
     * Copies {@code src[from, from + n)} to {@code ring[at, at + n)}; the cursors of both stay where they are.
     *
     * @param chosen whether {@link StreamingChoice} streams now (auto)
     */
    void copy(ByteBuffer ring, int at, ByteBuffer src, int from, int n, boolean chosen) {
        if (n >= streamFromBytes && (mode == Mode.ALWAYS || chosen && mode == Mode.AUTO) && src.isDirect()) {
            kernels.copyForPeer(ring, at, src, from, n);
        } else {
            ring.put(at, src, from, n);
        }
    }
}
