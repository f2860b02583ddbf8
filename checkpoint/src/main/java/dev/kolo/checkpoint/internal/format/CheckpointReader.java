package dev.kolo.checkpoint.internal.format;

import dev.kolo.checkpoint.CorruptCheckpointException;
import dev.kolo.checkpoint.StoredCheckpoint;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.NoSuchFileException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads and verifies one stored checkpoint, whatever the store: the manifest's own checksum and fields,
 * the data size, the data header against the manifest, then every tensor's CRC32C.
 */
public final class CheckpointReader {
    private static final Duration CRC_TIMEOUT = Duration.ofMinutes(30);

    /** A checkpoint read in full: its manifest, a buffer per tensor, and what failed verification. */
    public record Verified(Manifest manifest, List<ByteBuffer> data, List<CorruptCheckpointException> problems) {
        public boolean ok() {
            return problems.isEmpty();
        }

        /** @throws CorruptCheckpointException the first problem, mentioning how many more there are */
        public void throwIfCorrupt() throws CorruptCheckpointException {
            if (problems.isEmpty()) {
                return;
            }
            CorruptCheckpointException first = problems.get(0);
            if (problems.size() == 1) {
                throw first;
            }
            CorruptCheckpointException all = new CorruptCheckpointException(first.location(),
                    first.tensor().orElse(null), first.getMessage().substring(first.location().length() + 2)
                    + " (and " + (problems.size() - 1) + " more corrupt tensors)");
            problems.subList(1, problems.size()).forEach(all::addSuppressed);
            throw all;
        }
    }

    private CheckpointReader() {
    }

    /** Reads and checks the manifest only. */
    public static Manifest readManifest(StoredCheckpoint sc) throws CorruptCheckpointException, IOException {
        byte[] bytes;
        try {
            bytes = sc.readManifest();
        } catch (NoSuchFileException e) {
            throw new CorruptCheckpointException(sc.manifestLocation(), null, "manifest is missing");
        }
        Manifest m = ManifestCodec.decode(bytes, sc.manifestLocation());
        if (!m.id().equals(sc.id())) {
            throw new CorruptCheckpointException(sc.manifestLocation(), null, "manifest describes " + m.id()
                    + ", not " + sc.id());
        }
        return m;
    }

    /**
     * Verifies everything. Damage to the manifest, the size or the header is thrown at once; damaged
     * tensors are collected in {@link Verified#problems()} so all of them get reported.
     */
    public static Verified verify(StoredCheckpoint sc) throws CorruptCheckpointException, IOException {
        Manifest m = readManifest(sc);
        long size;
        try {
            size = sc.dataSize();
        } catch (NoSuchFileException e) {
            throw new CorruptCheckpointException(sc.dataLocation(), null, "data file is missing");
        }
        if (size != m.dataBytes()) {
            throw new CorruptCheckpointException(sc.dataLocation(), null, (size < m.dataBytes() ? "truncated: " : "")
                    + "data is " + size + " bytes, the manifest expects " + m.dataBytes());
        }
        DataHeader.verify(sc.readData(0, DataHeader.SIZE), m, sc.dataLocation());
        List<ByteBuffer> data = new ArrayList<>(m.tensors().size());
        for (TensorEntry t : m.tensors()) {
            data.add(sc.readData(t.offset(), (int) t.length()));
        }
        int[] actual = ParallelCrc.of(data, CRC_TIMEOUT);
        List<CorruptCheckpointException> problems = new ArrayList<>();
        for (int i = 0; i < actual.length; i++) {
            TensorEntry t = m.tensors().get(i);
            if (actual[i] != t.crc32c()) {
                problems.add(new CorruptCheckpointException(sc.dataLocation(), t.name(), "tensor '" + t.name()
                        + "' (" + t.dtype() + " " + t.shapeString() + ", " + t.length() + " bytes at offset "
                        + t.offset() + ") checksum mismatch: CRC32C expected " + Crc.hex(t.crc32c()) + ", actual "
                        + Crc.hex(actual[i])));
            }
        }
        return new Verified(m, data, problems);
    }
}
