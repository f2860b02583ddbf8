package dev.kolo.checkpoint.internal.format;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Test;

class ParallelCrcTest {
    @Test
    void combineEqualsTheChecksumOfTheConcatenation() {
        Random r = new Random(1);
        byte[] data = new byte[100_000];
        r.nextBytes(data);
        for (int split : new int[] {0, 1, 7, 4096, 65_537, 99_999, 100_000}) {
            CRC32C a = new CRC32C();
            a.update(data, 0, split);
            CRC32C b = new CRC32C();
            b.update(data, split, data.length - split);
            CRC32C whole = new CRC32C();
            whole.update(data);
            assertEquals((int) whole.getValue(),
                    ParallelCrc.combine((int) a.getValue(), (int) b.getValue(), data.length - split), "split " + split);
        }
    }

    @Test
    void parallelChecksumsMatchSequentialOnes() {
        Random r = new Random(2);
        List<ByteBuffer> buffers = new ArrayList<>();
        int[] expected = new int[5];
        int[] sizes = {0, 13, ParallelCrc.PIECE, ParallelCrc.PIECE * 2 + 5, 3 * 1024 * 1024};
        for (int i = 0; i < sizes.length; i++) {
            byte[] b = new byte[sizes[i]];
            r.nextBytes(b);
            ByteBuffer d = ByteBuffer.allocateDirect(b.length + 3);
            d.put(new byte[3]).put(b).flip().position(3); // non-zero position is respected
            buffers.add(d);
            CRC32C c = new CRC32C();
            c.update(b);
            expected[i] = (int) c.getValue();
        }
        assertArrayEquals(expected, ParallelCrc.of(buffers, Duration.ofMinutes(1)));
        assertEquals(3, buffers.get(4).position());
    }
}
