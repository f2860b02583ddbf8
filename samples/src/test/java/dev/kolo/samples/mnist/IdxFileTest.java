package dev.kolo.samples.mnist;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPOutputStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class IdxFileTest {
    @TempDir
    Path dir;

    /** An IDX image file of {@code n} 2x3 images whose pixel k of image i is i*6+k. */
    private static byte[] images(int n) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(0x00000803);
        out.writeInt(n);
        out.writeInt(2);
        out.writeInt(3);
        for (int i = 0; i < n * 6; i++) {
            out.writeByte(i);
        }
        return bytes.toByteArray();
    }

    private static byte[] labels(int n) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(0x00000801);
        out.writeInt(n);
        for (int i = 0; i < n; i++) {
            out.writeByte(i % 10);
        }
        return bytes.toByteArray();
    }

    private Path write(String name, byte[] content, boolean gzip) throws IOException {
        Path p = dir.resolve(name);
        try (OutputStream out = gzip ? new GZIPOutputStream(Files.newOutputStream(p)) : Files.newOutputStream(p)) {
            out.write(content);
        }
        return p;
    }

    @Test
    void readsPlainAndGzippedAlike() throws IOException {
        byte[] raw = images(4);
        IdxFile plain = IdxFile.read(write("plain", raw, false));
        IdxFile gz = IdxFile.read(write("packed", raw, true)); // no .gz suffix: recognised by content
        for (IdxFile f : new IdxFile[] {plain, gz}) {
            assertArrayEquals(new int[] {4, 2, 3}, f.dims());
            assertEquals(4, f.count());
            assertEquals(6, f.itemSize());
            assertEquals(23, f.data()[23]);
        }
    }

    @Test
    void badMagicIsNamed() throws IOException {
        byte[] raw = images(1);
        raw[2] = 0x0D; // float elements
        IOException e = assertThrows(IOException.class, () -> IdxFile.read(write("floats", raw, false)));
        assertTrue(e.getMessage().contains("only unsigned bytes"), e.getMessage());
        IOException png = assertThrows(IOException.class, () -> IdxFile.read(write("x.png",
                new byte[] {(byte) 0x89, 'P', 'N', 'G', 0, 0, 0, 0}, true)));
        assertTrue(png.getMessage().contains("bad magic number 0x89504e47") && png.getMessage().contains("x.png"),
                png.getMessage());
    }

    @Test
    void truncatedAndOverlongFilesAreRejected() throws IOException {
        byte[] raw = images(3);
        IOException cut = assertThrows(IOException.class, () -> IdxFile.read(write("cut",
                java.util.Arrays.copyOf(raw, raw.length - 1), true)));
        assertTrue(cut.getMessage().contains("truncated"), cut.getMessage());
        IOException longer = assertThrows(IOException.class, () -> IdxFile.read(write("long",
                java.util.Arrays.copyOf(raw, raw.length + 1), false)));
        assertTrue(longer.getMessage().contains("beyond"), longer.getMessage());
    }

    @Test
    void loadsADirectoryOfTheFourFiles() throws IOException {
        write("train-images-idx3-ubyte.gz", images(5), true);
        write("train-labels-idx1-ubyte", labels(5), false);
        write("t10k-images-idx3-ubyte", images(2), false);
        write("t10k-labels-idx1-ubyte.gz", labels(2), true);
        FashionMnist data = FashionMnist.load(dir);
        assertEquals(5, data.train().count());
        assertEquals(2, data.test().count());
        float[] x = new float[12];
        int[] y = new int[2];
        data.train().fill(new int[] {4, 1}, 0, 2, x, y);
        assertArrayEquals(new int[] {4, 1}, y);
        assertEquals(24 / 255f, x[0], 1e-7f);
        assertEquals(11 / 255f, x[11], 1e-7f);
    }

    @Test
    void missingFilesSayHowToGetThem() throws IOException {
        write("train-images-idx3-ubyte.gz", images(5), true);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> FashionMnist.load(dir));
        String m = e.getMessage();
        assertTrue(m.contains("apt-get install dataset-fashion-mnist") && m.contains("--data DIR")
                && m.contains("train-labels-idx1-ubyte") && !m.contains("train-images") && !m.contains("\n"), m);
    }

    private static byte[] header(int... dims) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(0x00000800 | dims.length);
        for (int d : dims) {
            out.writeInt(d);
        }
        return bytes.toByteArray();
    }

    private static IOException rejection(byte[] content) {
        return assertThrows(IOException.class, () -> IdxFile.read("f", new java.io.ByteArrayInputStream(content)));
    }

    @Test
    void dimensionsWhoseProductWrapsAroundAreTooLarge() throws IOException {
        // 2^16 four times is 2^64, which wraps to 0 in a long: it once read as an empty, valid file.
        assertTrue(rejection(header(65536, 65536, 65536, 65536)).getMessage().contains("too large"));
        // A zero count does not excuse the item size: itemSize() multiplies the other dims.
        assertTrue(rejection(header(0, 65536, 65536, 65536)).getMessage().contains("too large"));
        assertTrue(rejection(header(3, -1)).getMessage().contains("negative"));
        IdxFile empty = IdxFile.read("f", new java.io.ByteArrayInputStream(header(0, 28, 28)));
        assertEquals(0, empty.count());
        assertEquals(784, empty.itemSize());
    }

    @Test
    void aHeaderPromisingGigabytesOverAShortFileAllocatesNothingLikeIt() throws IOException {
        java.lang.management.MemoryMXBean memory = java.lang.management.ManagementFactory.getMemoryMXBean();
        long before = memory.getHeapMemoryUsage().getUsed();
        IOException e = rejection(header(2_000_000_000)); // 2 GB of labels claimed, none present
        long grew = memory.getHeapMemoryUsage().getUsed() - before;
        assertTrue(e.getMessage().contains("truncated") && e.getMessage().contains("only 0 follow"), e.getMessage());
        assertTrue(grew < 512L << 20, "heap grew by " + grew + " bytes");
    }
}
