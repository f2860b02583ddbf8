package dev.kolo.samples.bench;

import dev.kolo.checkpoint.CheckpointId;
import dev.kolo.checkpoint.CheckpointState;
import dev.kolo.checkpoint.Checkpointer;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.Tensor;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.LongBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Measures checkpoint saving and restoring against plain sequential file I/O of the same bytes, in the
 * same run, on the same disk. Cases (median of the measured repetitions, after one warm-up):
 * <ul>
 *   <li>{@code plain_write}: one file written sequentially from a direct buffer, then fsync;</li>
 *   <li>{@code save_sync}: {@link Checkpointer#saveSync} (CRC32C, data and manifest fsynced, renames,
 *       directory fsyncs, latest pointer, retention);</li>
 *   <li>{@code save_blocking} / {@code save_async_total}: how long {@link Checkpointer#save} blocks the
 *       caller, and until its future completes;</li>
 *   <li>{@code plain_read}: the plain file read sequentially into a direct buffer;</li>
 *   <li>{@code restore}: {@link Checkpointer#restoreLatest()} (manifest, every CRC32C verified, tensors
 *       mapped read-only); {@code restore_copy} the same with {@code copyOnRestore(true)}.</li>
 * </ul>
 * Reads are measured on files just written, so both are equally warm in the page cache. When GNU
 * {@code dd} is available, {@code plain_read_cold} and {@code restore_cold} are measured too, after
 * dropping both files from the page cache with {@code dd iflag=nocache count=0} (posix_fadvise
 * DONTNEED); the cold restore reads the synchronous save's checkpoint, which no mapping holds. Retention
 * (deleting old checkpoints) runs on the writer thread after a save completes and is not timed.
 *
 * <p>Ratios: {@code blocking_vs_sync} = save_blocking / save_sync (target at most 0.05);
 * {@code write_vs_plain} = plain_write / save_sync time, i.e. throughput relative to plain (target at
 * least 0.8); {@code restore_vs_plain} = plain_read / restore time (target at least 0.8).
 *
 * <p>Run by {@code worker.jar bench checkpoint DIR} ({@link BenchCheckpointCommand}). It uses only the checkpoint
 * module's public API and its documented on-disk layout, as an application would; it lives here, not in the
 * checkpoint library, so the library carries no benchmark.
 */
public final class CheckpointBenchmark {
    /** The size of state the targets are stated for: 256 MiB. */
    public static final long DEFAULT_BYTES = 256L << 20;
    private static final int TENSORS = 16;
    private static final int IO_CHUNK = 8 << 20;

    private CheckpointBenchmark() {
    }

    /**
     * Runs the benchmark with 256 MiB of state, in a fresh subdirectory of {@code dir} that is removed
     * afterwards, printing JSON lines ({@code json}) or a table to {@code out}.
     */
    public static void run(PrintStream out, boolean json, Path dir) throws IOException {
        run(out, json, dir, DEFAULT_BYTES, 3);
    }

    /** As {@link #run(PrintStream, boolean, Path)} with another state size and repetition count. */
    public static void run(PrintStream out, boolean json, Path dir, long bytes, int reps) throws IOException {
        if (bytes < TENSORS * 64L || reps < 1) {
            throw new IllegalArgumentException("need at least " + TENSORS * 64 + " bytes and one repetition");
        }
        Files.createDirectories(dir);
        Path work = Files.createTempDirectory(dir, "kolo-ckpt-bench-");
        boolean cold = ddAvailable();
        Map<String, List<Double>> times = new LinkedHashMap<>();
        for (String c : new String[] {"save_blocking", "save_sync", "save_async_total", "plain_write", "restore",
                "restore_copy", "plain_read", "restore_cold", "plain_read_cold"}) {
            times.put(c, new ArrayList<>());
        }
        try {
            List<Tensor> tensors = state(bytes);
            long total = (bytes / TENSORS) * TENSORS;
            ByteBuffer plainSrc = ByteBuffer.allocateDirect((int) Math.min(total, Integer.MAX_VALUE - 8));
            fill(plainSrc, 7);
            ByteBuffer readBuf = ByteBuffer.allocateDirect(plainSrc.capacity());
            Path plain = work.resolve("plain.bin");
            Path ckptDir = work.resolve("ckpt");
            try (Checkpointer ckpt = Checkpointer.builder().job("bench").directory(ckptDir).keep(2).build();
                    Checkpointer copying = Checkpointer.builder().job("bench").directory(ckptDir).writer(false)
                            .copyOnRestore(true).build()) {
                for (int rep = 0; rep <= reps; rep++) {
                    boolean measure = rep > 0;
                    long syncStep = 2L * rep;
                    // plain write, then a synchronous checkpoint of the same bytes
                    double pw = plainWrite(plain, plainSrc);
                    double sync = time(() -> ckpt.saveSync(stateOf(tensors, syncStep)));
                    ckpt.awaitSaves(); // retention (deleting old checkpoints) runs after the save, untimed
                    // asynchronous save: blocking part and total
                    long t0 = System.nanoTime();
                    var future = ckpt.save(stateOf(tensors, syncStep + 1));
                    long t1 = System.nanoTime();
                    try {
                        future.get(10, TimeUnit.MINUTES);
                    } catch (Exception e) {
                        throw new IOException("asynchronous save failed: " + e, e);
                    }
                    long t2 = System.nanoTime();
                    ckpt.awaitSaves();
                    // Plain file and checkpoint were both just written: equally warm in the page cache.
                    double pr = plainRead(plain, readBuf);
                    double rs = time(() -> ckpt.restoreLatest().orElseThrow());
                    double rc = time(() -> copying.restoreLatest().orElseThrow());
                    double prc = Double.NaN;
                    double rsc = Double.NaN;
                    if (cold) {
                        // The synchronous save's checkpoint was never mapped (a live mapping keeps pages cached).
                        CheckpointId syncId = new CheckpointId(syncStep, 0);
                        Path data = dataFile(ckptDir, syncId);
                        cold = dropCache(plain) && dropCache(data);
                        if (cold) {
                            prc = plainRead(plain, readBuf);
                            rsc = time(() -> ckpt.restore(syncId));
                        }
                    }
                    if (measure) {
                        times.get("plain_write").add(pw);
                        times.get("save_sync").add(sync);
                        times.get("save_blocking").add((t1 - t0) / 1e9);
                        times.get("save_async_total").add((t2 - t0) / 1e9);
                        times.get("plain_read").add(pr);
                        times.get("restore").add(rs);
                        times.get("restore_copy").add(rc);
                        if (cold) {
                            times.get("plain_read_cold").add(prc);
                            times.get("restore_cold").add(rsc);
                        }
                    }
                }
            }
            Map<String, Double> median = new LinkedHashMap<>();
            for (Map.Entry<String, List<Double>> e : times.entrySet()) {
                if (e.getValue().isEmpty()) {
                    continue;
                }
                double[] v = e.getValue().stream().mapToDouble(Double::doubleValue).sorted().toArray();
                double m = v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
                median.put(e.getKey(), m);
                line(out, json, e.getKey(), total, m);
            }
            ratio(out, json, "blocking_vs_sync", median.get("save_blocking") / median.get("save_sync"));
            ratio(out, json, "write_vs_plain", median.get("plain_write") / median.get("save_sync"));
            ratio(out, json, "restore_vs_plain", median.get("plain_read") / median.get("restore"));
            if (median.containsKey("restore_cold")) {
                ratio(out, json, "restore_vs_plain_cold", median.get("plain_read_cold") / median.get("restore_cold"));
            }
        } finally {
            deleteRecursively(work);
        }
    }

    /**
     * The data file of checkpoint {@code id} in the local directory {@code dir}, by the documented on-disk layout
     * ({@code DIR/<checkpoint name>/data.bin}, checkpoint/README.md).
     */
    private static Path dataFile(Path dir, CheckpointId id) {
        return dir.toAbsolutePath().normalize().resolve(id.name()).resolve("data.bin");
    }

    /** fsyncs a directory, making a deletion in it durable. */
    private static void forceDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            throw new IOException("cannot fsync directory " + dir + ": " + e.getMessage(), e);
        }
    }

    /** Deletes a file or a directory tree; missing entries are fine. Symbolic links are not followed. */
    private static void deleteRecursively(Path p) throws IOException {
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (java.util.stream.Stream<Path> tree = Files.walk(p)) { // walk does not follow links
            for (Path q : (Iterable<Path>) tree.sorted(java.util.Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(q);
            }
        }
    }

    private static CheckpointState stateOf(List<Tensor> tensors, long step) {
        CheckpointState.Builder b = CheckpointState.builder(step).epoch(1).worldSize(1)
                .scalar("lr", 0.01).metadataJson("{\"bench\":true}");
        for (int i = 0; i < tensors.size(); i++) {
            b.tensor("layer" + i + ".weight", tensors.get(i));
        }
        return b.build();
    }

    private static List<Tensor> state(long bytes) {
        long per = bytes / TENSORS / 4;
        List<Tensor> out = new ArrayList<>();
        for (int i = 0; i < TENSORS; i++) {
            ByteBuffer b = ByteBuffer.allocateDirect((int) (per * 4)).order(ByteOrder.LITTLE_ENDIAN);
            fill(b, i + 1);
            out.add(Tensor.wrap(DType.FLOAT32, b, per));
        }
        return out;
    }

    /** Fills with xorshift noise (incompressible, unlike zeros). */
    private static void fill(ByteBuffer b, long seed) {
        LongBuffer l = b.duplicate().order(ByteOrder.LITTLE_ENDIAN).asLongBuffer();
        long x = seed * 0x9E3779B97F4A7C15L + 1;
        while (l.hasRemaining()) {
            x ^= x << 13;
            x ^= x >>> 7;
            x ^= x << 17;
            l.put(x);
        }
    }

    private static double plainWrite(Path file, ByteBuffer src) throws IOException {
        if (Files.deleteIfExists(file)) {
            forceDirectory(file.getParent()); // the deletion's journal commit is not part of the write
        }
        long t0 = System.nanoTime();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            ByteBuffer b = src.duplicate().clear();
            while (b.hasRemaining()) {
                ByteBuffer chunk = b.duplicate().limit(Math.min(b.limit(), b.position() + IO_CHUNK));
                b.position(chunk.limit());
                while (chunk.hasRemaining()) {
                    ch.write(chunk);
                }
            }
            ch.force(true);
        }
        return (System.nanoTime() - t0) / 1e9;
    }

    private static double plainRead(Path file, ByteBuffer dst) throws IOException {
        long t0 = System.nanoTime();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            ByteBuffer b = dst.duplicate().clear();
            while (b.hasRemaining()) {
                ByteBuffer chunk = b.duplicate().limit(Math.min(b.limit(), b.position() + IO_CHUNK));
                int n = 0;
                while (chunk.hasRemaining() && n >= 0) {
                    n = ch.read(chunk);
                }
                b.position(chunk.position());
                if (n < 0) {
                    break;
                }
            }
        }
        return (System.nanoTime() - t0) / 1e9;
    }

    private interface Action {
        void run() throws Exception;
    }

    private static double time(Action a) throws IOException {
        long t0 = System.nanoTime();
        try {
            a.run();
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(e);
        }
        return (System.nanoTime() - t0) / 1e9;
    }

    private static boolean ddAvailable() {
        for (String d : new String[] {"/usr/bin/dd", "/bin/dd"}) {
            if (Files.isExecutable(Path.of(d))) {
                return true;
            }
        }
        return false;
    }

    /** Drops a (clean, fsynced) file from the page cache with GNU dd's posix_fadvise(DONTNEED). */
    private static boolean dropCache(Path file) {
        try {
            Process p = new ProcessBuilder("dd", "if=" + file, "iflag=nocache", "count=0")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static void line(PrintStream out, boolean json, String name, long bytes, double seconds) {
        double gbps = bytes / seconds / 1e9;
        if (json) {
            out.printf(Locale.ROOT, "{\"bench\":\"checkpoint\",\"case\":\"%s\",\"bytes\":%d,\"seconds\":%.6f,\"GBps\":%.3f}%n",
                    name, bytes, seconds, gbps);
        } else {
            out.printf(Locale.ROOT, "%-18s %12d bytes %10.4f s %8.3f GB/s%n", name, bytes, seconds, gbps);
        }
    }

    private static void ratio(PrintStream out, boolean json, String name, double value) {
        if (json) {
            out.printf(Locale.ROOT, "{\"bench\":\"checkpoint\",\"ratio\":\"%s\",\"value\":%.4f}%n", name, value);
        } else {
            out.printf(Locale.ROOT, "%-22s %8.4f%n", name, value);
        }
    }
}
