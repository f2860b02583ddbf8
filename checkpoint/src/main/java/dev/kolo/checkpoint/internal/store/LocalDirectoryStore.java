package dev.kolo.checkpoint.internal.store;

import dev.kolo.checkpoint.CheckpointId;
import dev.kolo.checkpoint.CheckpointImage;
import dev.kolo.checkpoint.CheckpointStore;
import dev.kolo.checkpoint.StoredCheckpoint;
import dev.kolo.checkpoint.internal.format.Manifest;
import dev.kolo.checkpoint.internal.format.ManifestCodec;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checkpoints in a local directory (in Kubernetes, a PersistentVolume mounted into the pod), one
 * subdirectory per checkpoint holding {@code data.bin} and {@code manifest.json}, and a {@code latest}
 * pointer. See README.md for the layout.
 *
 * <p>Commit protocol: write both files into {@code .tmp-<name>-<random>/}, fsync each file and that
 * directory, rename it to {@code <name>} (the commit point), fsync the checkpoint directory, then replace
 * {@code latest} the same way. A crash at any moment leaves every earlier checkpoint as it was; leftover
 * temporary entries are ignored by readers and removed by the next writer ({@link #removeLeftovers()}).
 */
public final class LocalDirectoryStore implements CheckpointStore {
    private static final Logger LOG = LoggerFactory.getLogger(LocalDirectoryStore.class);
    public static final String TEMP_PREFIX = ".tmp-";
    public static final String DELETE_PREFIX = ".del-";
    /** Reads map the data file in windows of this size, so many small tensors share one mapping. */
    private static final long MAP_WINDOW = 256L << 20;
    private static final int PREFETCH_PIECE = 8 << 20;
    private static final java.util.concurrent.ExecutorService PREFETCH =
            java.util.concurrent.Executors.newCachedThreadPool(r -> {
                Thread t = new Thread(r, "kolo-checkpoint-prefetch");
                t.setDaemon(true);
                return t;
            });

    private final Path dir;

    /** @param dir the checkpoint directory; created on the first commit if it does not exist */
    public LocalDirectoryStore(Path dir) {
        this.dir = Objects.requireNonNull(dir, "dir").toAbsolutePath().normalize();
    }

    /** @return the checkpoint directory */
    public Path directory() {
        return dir;
    }

    @Override
    public String describe() {
        return "directory " + dir;
    }

    /** @return the directory of checkpoint {@code id} */
    public Path pathOf(CheckpointId id) {
        return dir.resolve(id.name());
    }

    @Override
    public void commit(CheckpointImage image) throws IOException {
        ensureDirectory();
        CheckpointId id = image.id();
        Path tmp = dir.resolve(TEMP_PREFIX + id.name() + "-" + shortRandom());
        Path target = pathOf(id);
        boolean committed = false;
        long[] t = new long[8];
        t[0] = System.nanoTime();
        try {
            Files.createDirectory(tmp);
            Path data = tmp.resolve(Manifest.DATA_FILE);
            try (FileChannel ch = FileChannel.open(data, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                image.writeData(ch);
                t[1] = System.nanoTime();
                ch.force(true);
                t[2] = System.nanoTime();
            } catch (IOException e) {
                throw new IOException("cannot write " + data + ": " + FileSync.reason(e), e);
            }
            FileSync.writeDurably(tmp.resolve(Manifest.MANIFEST_FILE), image.manifestBytes());
            t[3] = System.nanoTime();
            FileSync.forceDirectory(tmp);
            t[4] = System.nanoTime();
            Path replaced = null;
            if (Files.exists(target, LinkOption.NOFOLLOW_LINKS)) {
                // A directory cannot be renamed over a non-empty one: move the old one aside first.
                replaced = dir.resolve(DELETE_PREFIX + id.name() + "-" + shortRandom());
                Files.move(target, replaced, StandardCopyOption.ATOMIC_MOVE);
            }
            try {
                Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                if (replaced != null) {
                    Files.move(replaced, target, StandardCopyOption.ATOMIC_MOVE);
                }
                throw e;
            }
            committed = true;
            FileSync.forceDirectory(dir);
            t[5] = System.nanoTime();
            if (replaced != null) {
                FileSync.deleteRecursively(replaced);
            }
        } catch (IOException | RuntimeException e) {
            if (!committed) {
                try {
                    FileSync.deleteRecursively(tmp);
                } catch (IOException cleanup) {
                    e.addSuppressed(cleanup);
                }
            }
            throw e;
        }
        LatestPointer.update(dir, id);
        t[6] = System.nanoTime();
        if (LOG.isDebugEnabled()) {
            LOG.debug("commit {}: write {} ms, fsync data {} ms, manifest {} ms, fsync tmp dir {} ms, rename+fsync dir {} ms,"
                    + " latest {} ms", id, ms(t[1] - t[0]), ms(t[2] - t[1]), ms(t[3] - t[2]), ms(t[4] - t[3]),
                    ms(t[5] - t[4]), ms(t[6] - t[5]));
        }
    }

    private static long ms(long nanos) {
        return nanos / 1_000_000;
    }

    @Override
    public List<CheckpointId> list() throws IOException {
        List<CheckpointId> ids = new ArrayList<>();
        if (!Files.isDirectory(dir)) {
            return ids;
        }
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            for (Path p : s) {
                Optional<CheckpointId> id = CheckpointId.parse(p.getFileName().toString());
                if (id.isPresent() && Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
                    ids.add(id.get());
                }
            }
        }
        ids.sort(Comparator.reverseOrder());
        return ids;
    }

    /** @return the checkpoint the {@code latest} pointer names, if it exists and is readable */
    public Optional<CheckpointId> latestPointer() {
        return LatestPointer.read(dir);
    }

    @Override
    public StoredCheckpoint open(CheckpointId id) throws IOException {
        Path p = pathOf(id);
        if (!Files.isDirectory(p)) {
            throw new NoSuchFileException(p.toString(), null, "no such checkpoint");
        }
        return new Stored(id, p);
    }

    @Override
    public void delete(CheckpointId id) throws IOException {
        Path p = pathOf(id);
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        // Rename first so a crash half-way through never leaves a half-deleted checkpoint under its name.
        Path doomed = dir.resolve(DELETE_PREFIX + id.name() + "-" + shortRandom());
        Files.move(p, doomed, StandardCopyOption.ATOMIC_MOVE);
        FileSync.forceDirectory(dir);
        FileSync.deleteRecursively(doomed);
        // Commit the deletion now, so freeing (and discarding) its blocks is paid here, in housekeeping,
        // and not by the next save's fsync.
        FileSync.forceDirectory(dir);
    }

    /**
     * Removes what an interrupted writer left: temporary checkpoint directories, half-deleted ones and
     * temporary pointer files. Only the (single) writer of the directory may call this, while it is not
     * saving.
     *
     * @return how many entries were removed
     */
    public int removeLeftovers() throws IOException {
        if (!Files.isDirectory(dir)) {
            return 0;
        }
        int removed = 0;
        List<Path> leftovers = new ArrayList<>();
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            for (Path p : s) {
                String n = p.getFileName().toString();
                if (n.startsWith(TEMP_PREFIX) || n.startsWith(DELETE_PREFIX) || n.startsWith(LatestPointer.TEMP_PREFIX)) {
                    leftovers.add(p);
                }
            }
        }
        for (Path p : leftovers) {
            LOG.info("removing leftover of an interrupted checkpoint write: {}", p);
            FileSync.deleteRecursively(p);
            removed++;
        }
        if (removed > 0) {
            FileSync.forceDirectory(dir);
        }
        return removed;
    }

    private void ensureDirectory() throws IOException {
        if (Files.isDirectory(dir)) {
            return;
        }
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new IOException("cannot create checkpoint directory " + dir + ": " + FileSync.reason(e), e);
        }
        if (dir.getParent() != null) {
            FileSync.forceDirectory(dir.getParent());
        }
    }

    private static String shortRandom() {
        return UUID.randomUUID().toString().substring(0, 8);
    }

    @Override
    public String toString() {
        return "LocalDirectoryStore[" + dir + "]";
    }

    /** One checkpoint directory, read through read-only memory mappings of its data file. */
    private static final class Stored implements StoredCheckpoint {
        private final CheckpointId id;
        private final Path path;
        private FileChannel channel;
        private ByteBuffer window;
        private volatile boolean closed;
        private long windowStart;

        Stored(CheckpointId id, Path path) {
            this.id = id;
            this.path = path;
        }

        @Override
        public CheckpointId id() {
            return id;
        }

        @Override
        public String location() {
            return path.toString();
        }

        @Override
        public String manifestLocation() {
            return path.resolve(Manifest.MANIFEST_FILE).toString();
        }

        @Override
        public String dataLocation() {
            return path.resolve(Manifest.DATA_FILE).toString();
        }

        @Override
        public byte[] readManifest() throws IOException {
            // Never more than a manifest may hold: the decoder rejects the one byte too many.
            try (java.io.InputStream in = Files.newInputStream(path.resolve(Manifest.MANIFEST_FILE))) {
                return in.readNBytes(ManifestCodec.MAX_BYTES + 1);
            }
        }

        @Override
        public long dataSize() throws IOException {
            return channel().size();
        }

        @Override
        public ByteBuffer readData(long offset, int length) throws IOException {
            if (length == 0) {
                return ByteBuffer.allocateDirect(0).order(ByteOrder.LITTLE_ENDIAN);
            }
            long fileSize = channel().size();
            if (offset < 0 || length < 0 || offset > fileSize - length) {
                throw new java.io.EOFException(dataLocation() + " is " + fileSize + " bytes; cannot read "
                        + length + " bytes at offset " + offset);
            }
            if (window == null || offset < windowStart || offset + length > windowStart + window.capacity()) {
                long start = offset & ~4095L;
                long span = Math.min(Math.max(MAP_WINDOW, offset + length - start), fileSize - start);
                if (span > Integer.MAX_VALUE) {
                    start = offset;
                    span = length;
                }
                java.nio.MappedByteBuffer mapped = channel().map(FileChannel.MapMode.READ_ONLY, start, span);
                prefetch(mapped);
                window = mapped;
                windowStart = start;
            }
            return window.slice((int) (offset - windowStart), length).order(ByteOrder.LITTLE_ENDIAN);
        }

        /**
         * Reads the window ahead on a background thread, piece by piece, in front of the checksum
         * workers: {@code load()} is madvise(WILLNEED) plus a touch of every page, so a cold file is
         * read in large sequential requests while the checksums of earlier pieces are computed, instead
         * of one small read per page fault. For a warm file it only fills page tables.
         */
        private void prefetch(java.nio.MappedByteBuffer mapped) {
            int size = mapped.capacity();
            PREFETCH.execute(() -> {
                for (int off = 0; off < size && !closed; off += PREFETCH_PIECE) {
                    mapped.slice(off, Math.min(PREFETCH_PIECE, size - off)).load();
                }
            });
        }

        private FileChannel channel() throws IOException {
            if (channel == null) {
                channel = FileChannel.open(path.resolve(Manifest.DATA_FILE), StandardOpenOption.READ);
            }
            return channel;
        }

        @Override
        public void close() throws IOException {
            closed = true;
            window = null;
            if (channel != null) {
                channel.close();
            }
        }
    }
}
