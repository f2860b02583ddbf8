package dev.kolo.kernels;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.SplittableRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The copy into a shared-memory ring gives exactly the bytes of a plain copy at every length and alignment (the
 * native one splits each copy into a head up to a cache line, whole streamed lines and a tail), and touches nothing
 * outside its range.
 */
class CopyForPeerTest {

    static Iterable<Impl> impls() {
        return Impl.all();
    }

    private static final int[] LENGTHS = {0, 1, 15, 63, 64, 65, 127, 128, 191, 4096 + 7, 32768, 65536 + 33, (1 << 20) + 5};
    private static final int[] OFFSETS = {0, 1, 8, 31, 63};

    @ParameterizedTest(name = "{0}")
    @MethodSource("impls")
    void copiesExactlyItsRange(Impl impl) {
        impl.run(() -> {
            Kernels k = impl.kernels();
            SplittableRandom random = new SplittableRandom(7);
            int room = (1 << 20) + 256;
            ByteBuffer src = ByteBuffer.allocateDirect(room);
            ByteBuffer dst = ByteBuffer.allocateDirect(room);
            byte[] expected = new byte[room];
            byte[] actual = new byte[room];
            for (int length : LENGTHS) {
                for (int srcOffset : OFFSETS) {
                    for (int dstOffset : OFFSETS) {
                        for (int i = 0; i < room; i++) {
                            src.put(i, (byte) random.nextInt());
                            expected[i] = (byte) random.nextInt();
                            dst.put(i, expected[i]);
                        }
                        for (int i = 0; i < length; i++) {
                            expected[dstOffset + i] = src.get(srcOffset + i);
                        }
                        k.copyForPeer(dst, dstOffset, src, srcOffset, length);
                        dst.get(0, actual);
                        for (int i = 0; i < room; i++) {
                            if (expected[i] != actual[i]) {
                                assertEquals(expected[i], actual[i], impl.label + ": byte " + i + " of a copy of "
                                        + length + " bytes from offset " + srcOffset + " to " + dstOffset);
                            }
                        }
                    }
                }
            }
            return null;
        });
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("impls")
    void rejectsBadBuffersAndRanges(Impl impl) {
        impl.run(() -> {
            Kernels k = impl.kernels();
            ByteBuffer a = ByteBuffer.allocateDirect(64);
            ByteBuffer b = ByteBuffer.allocateDirect(64);
            assertThrows(IllegalArgumentException.class, () -> k.copyForPeer(a, 0, ByteBuffer.allocate(64), 0, 8));
            assertThrows(IllegalArgumentException.class, () -> k.copyForPeer(a, 0, b, 0, -1));
            assertThrows(IndexOutOfBoundsException.class, () -> k.copyForPeer(a, 8, b, 0, 57));
            assertThrows(IndexOutOfBoundsException.class, () -> k.copyForPeer(a, 0, b, 1, 64));
            assertThrows(ReadOnlyBufferException.class, () -> k.copyForPeer(a.asReadOnlyBuffer(), 0, b, 0, 8));
            return null;
        });
    }
}
