package dev.kolo.runtime.internal.engine.agree;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The id sets of a round message: written sparse when that is shorter, dense otherwise, read back alike. */
class RoundMessageTest {
    @Test
    void aSetReadsBackAsWrittenAndTakesTheShorterEncoding() {
        Random random = new Random(7);
        ByteBuffer b = ByteBuffer.allocateDirect(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        for (int words : new int[] {1, 2, 16, 256}) {
            for (int ids : new int[] {0, 1, 3, 2 * words, 2 * words + 1, 64 * words}) {
                long[] bits = new long[words];
                for (int i = 0; i < ids; i++) {
                    int id = random.nextInt(64 * words);
                    bits[id >>> 6] |= 1L << id;
                }
                int count = 0;
                for (long w : bits) {
                    count += Long.bitCount(w);
                }
                int end = RoundMessage.writeSet(b, 8, bits, words);
                assertEquals(8 + 4 + Math.min(4 * count, 8 * words), end,
                        words + " words, " + count + " ids");
                long[] back = new long[words];
                assertEquals(end, RoundMessage.readSet(b, 8, end, back, words));
                assertArrayEquals(bits, back, words + " words, " + count + " ids");
                assertEquals(-1, RoundMessage.readSet(b, 8, end - 1, back, words), "a set cut short is refused");
                assertEquals(end, RoundMessage.skipSet(b, 8, end, words), "skipped to where it ends");
                assertEquals(-1, RoundMessage.skipSet(b, 8, end - 1, words), "a set cut short is not skipped");
            }
        }
    }

    @Test
    void aSparseSetNamingAnIdBeyondTheWordsIsRefused() {
        ByteBuffer b = ByteBuffer.allocateDirect(64).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(0, 1).putInt(4, 64);
        assertEquals(-1, RoundMessage.readSet(b, 0, 8, new long[1], 1));
    }
}
