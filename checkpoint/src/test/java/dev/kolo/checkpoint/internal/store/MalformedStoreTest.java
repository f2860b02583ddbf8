package dev.kolo.checkpoint.internal.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.checkpoint.CheckpointId;
import dev.kolo.checkpoint.CorruptCheckpointException;
import dev.kolo.checkpoint.StoredCheckpoint;
import dev.kolo.checkpoint.internal.format.CheckpointReader;
import dev.kolo.checkpoint.internal.format.Manifest;
import dev.kolo.checkpoint.internal.format.ManifestCodec;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Files and replica entries written by someone else are checked before they size anything. */
class MalformedStoreTest {
    @TempDir
    Path dir;

    @Test
    void aHugeLatestPointerIsIgnoredWithoutReadingIt() throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(dir.resolve(LatestPointer.FILE).toFile(), "rw")) {
            f.setLength(3L << 30); // sparse 3 GiB: reading it whole would fail with an OutOfMemoryError
        }
        assertEquals(Optional.empty(), LatestPointer.read(dir));
        Files.writeString(dir.resolve(LatestPointer.FILE), "ckpt-s000000000007-g2\n");
        assertEquals(Optional.of(new CheckpointId(7, 2)), LatestPointer.read(dir));
    }

    @Test
    void aHugeManifestIsCorruptNotAnOutOfMemoryError() throws IOException {
        Path ckpt = Files.createDirectories(dir.resolve(new CheckpointId(1, 1).name()));
        try (RandomAccessFile f = new RandomAccessFile(ckpt.resolve(Manifest.MANIFEST_FILE).toFile(), "rw")) {
            f.setLength(3L << 30);
        }
        Files.write(ckpt.resolve(Manifest.DATA_FILE), new byte[64]);
        LocalDirectoryStore store = new LocalDirectoryStore(dir);
        try (StoredCheckpoint sc = store.open(new CheckpointId(1, 1))) {
            CorruptCheckpointException e = assertThrows(CorruptCheckpointException.class,
                    () -> CheckpointReader.readManifest(sc));
            assertTrue(e.getMessage().contains("more than " + ManifestCodec.MAX_BYTES), e.getMessage());
        }
    }

    @Test
    void readRangesNearLongMaxDoNotWrapAround() throws IOException {
        Path ckpt = Files.createDirectories(dir.resolve(new CheckpointId(1, 1).name()));
        Files.write(ckpt.resolve(Manifest.DATA_FILE), new byte[4096]);
        try (StoredCheckpoint sc = new LocalDirectoryStore(dir).open(new CheckpointId(1, 1))) {
            assertThrows(java.io.EOFException.class, () -> sc.readData(Long.MAX_VALUE - 10, 100));
            assertEquals(100, sc.readData(0, 100).remaining());
        }
    }

    private static byte[] index(String entry) {
        return ("{\"format\":\"kolo-checkpoint-replica\",\"formatVersion\":1,\"committed\":[" + entry + "]}")
                .getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void replicaIndexEntriesMustBeConsistent() throws IOException {
        String ok = "{\"id\":\"ckpt-s000000000001-g1\",\"key\":\"k\",\"dataBytes\":10000,\"chunkBytes\":4096,\"chunks\":3}";
        assertEquals(3, ClusterReplicaStore.decodeIndex(index(ok), "m").get(0).chunks());
        String[] bad = {
            ok.replace("\"chunkBytes\":4096", "\"chunkBytes\":0"),      // division by zero when reading
            ok.replace("\"chunks\":3", "\"chunks\":2"),                 // too few chunks for the size
            ok.replace("\"dataBytes\":10000", "\"dataBytes\":-1"),
            ok.replace("\"chunkBytes\":4096", "\"chunkBytes\":4294967296"),
            ok.replace("ckpt-s000000000001-g1", "ckpt-1"),
            ok.replace("\"key\":\"k\"", "\"key\":\"\""),
        };
        for (String b : bad) {
            IOException e = assertThrows(IOException.class, () -> ClusterReplicaStore.decodeIndex(index(b), "m"), b);
            assertTrue(e.getMessage().startsWith("the index of m is unreadable"), e.getMessage());
        }
    }
}
