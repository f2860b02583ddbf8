package dev.kolo.samples.mnist;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.kolo.testing.FuzzLimits;
import java.io.ByteArrayInputStream;
import java.io.IOException;

/**
 * Fuzz target of the IDX reader (plain or gzipped, recognised by content): any bytes either read as a file
 * whose data matches its header or are rejected with {@link IOException}; memory follows the bytes actually
 * there (gzip may expand about a thousandfold), never the sizes a header claims.
 */
class IdxFileFuzzTest {

    @FuzzTest
    void read(byte[] input) throws Exception {
        FuzzLimits.run(input, (1 << 20) + 2200L * input.length, () -> {
            IdxFile f;
            try {
                f = IdxFile.read("fuzz", new ByteArrayInputStream(input));
            } catch (IOException rejected) {
                return;
            }
            long elements = 1;
            for (int d : f.dims()) {
                elements *= d;
            }
            assertEquals(elements, f.data().length);
            assertEquals((long) f.count() * f.itemSize(), f.data().length);
        });
    }
}
