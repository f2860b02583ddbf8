package dev.kolo.runtime.internal.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.kolo.testing.FuzzLimits;
import java.nio.ByteBuffer;
import java.nio.channels.ScatteringByteChannel;

/**
 * Fuzz target of the data-frame reader, driven the way {@link Transport} drives it: a stream of bytes
 * arrives in reads of fuzzer-chosen sizes; frame by frame the header is checked as soon as it is complete
 * and the payload lands in its destination. Every outcome must be one of: all frames accepted with the
 * sent bytes in place, a mismatch naming a field, end of stream, or "would wait" (no more bytes). The reader
 * never writes outside the destination range and never sizes anything by the header's length.
 */
class FrameFuzzTest {
    private static final long GENERATION = 3;
    private static final long SEQ = 17;

    /** Delivers {@code data} in reads of the given sizes (cycled), then reports end of stream. */
    private static final class Chunked implements ScatteringByteChannel {
        private final ByteBuffer data;
        private final int[] sizes;
        private int next;

        Chunked(ByteBuffer data, int[] sizes) {
            this.data = data;
            this.sizes = sizes;
        }

        @Override
        public long read(ByteBuffer[] dsts, int offset, int length) {
            if (!data.hasRemaining()) {
                return -1;
            }
            int budget = Math.min(data.remaining(), sizes[next++ % sizes.length]);
            long moved = 0;
            for (int i = offset; i < offset + length && budget > 0; i++) {
                int n = Math.min(budget, dsts[i].remaining());
                dsts[i].put(data.slice(data.position(), n));
                data.position(data.position() + n);
                budget -= n;
                moved += n;
            }
            return moved;
        }

        @Override
        public long read(ByteBuffer[] dsts) {
            return read(dsts, 0, dsts.length);
        }

        @Override
        public int read(ByteBuffer dst) {
            return (int) read(new ByteBuffer[] {dst}, 0, 1);
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
        }
    }

    @FuzzTest
    void receive(byte[] input) throws Exception {
        FuzzLimits.run(input, (1 << 16) + 16L * input.length, () -> run(input));
    }

    private static void run(byte[] input) {
        if (input.length < 4) {
            return;
        }
        // Layout: frame count (1..4), then per frame an expected payload length (0..255), read sizes, stream.
        int frames = 1 + (input[0] & 3);
        int at = 1;
        int[] lengths = new int[frames];
        for (int f = 0; f < frames && at < input.length; f++) {
            lengths[f] = input[at++] & 0xff;
        }
        int[] sizes = new int[4];
        for (int i = 0; i < 4; i++) {
            sizes[i] = at < input.length ? 1 + (input[at++] & 0x3f) : 64;
        }
        ByteBuffer stream = ByteBuffer.wrap(input, at, input.length - at).slice();
        ScatteringByteChannel ch = new Chunked(stream.duplicate(), sizes);
        FrameReader reader = new FrameReader();
        ByteBuffer dest = ByteBuffer.allocate(256 + 32);
        int consumed = 0;
        for (int f = 0; f < frames; f++) {
            dest.clear();
            for (int i = 0; i < dest.capacity(); i++) {
                dest.put(i, (byte) 0x5A); // guard pattern
            }
            reader.begin(dest, 16, lengths[f]);
            boolean checked = false;
            while (reader.busy()) {
                long n;
                try {
                    n = reader.pump(ch);
                } catch (java.io.IOException e) {
                    throw new AssertionError(e);
                }
                if (n < 0 || n == 0 && reader.busy()) {
                    return; // end of stream: "closed the connection"; nothing more: the progress deadline
                }
                if (reader.headerComplete()) {
                    String mismatch = reader.check(GENERATION, SEQ, f);
                    checked = true;
                    if (mismatch != null) {
                        assertTrue(mismatch.startsWith("frame field "), mismatch);
                        return;
                    }
                }
            }
            assertTrue(checked, "frame " + f + " completed without its header being checked");
            dest.clear(); // the reader narrowed it to the payload range
            for (int i = 0; i < dest.capacity(); i++) {
                if (i < 16 || i >= 16 + lengths[f]) {
                    assertEquals((byte) 0x5A, dest.get(i), "wrote outside the destination at " + i);
                } else {
                    assertEquals(stream.get(consumed + Frame.HEADER_BYTES + i - 16), dest.get(i));
                }
            }
            consumed += Frame.HEADER_BYTES + lengths[f];
            reader.reset();
        }
    }
}
