package dev.kolo.runtime.ring;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.LongSupplier;

/**
 * Allreduce bandwidth/latency benchmark of the data plane. {@link #measureAllreduce} is the reusable core:
 * every rank of an already connected ring calls it (threads here, processes in the CLI) and all get the
 * same figure. {@link #main} runs np ranks as threads of this JVM over loopback and prints JSON lines
 * {@code {"bench":"allreduce","dtype":"float32","np":N,"bytes":B,"time_us":T,"algbw_GBps":A,"busbw_GBps":S}}.
 *
 * <p>Arguments: {@code [--np 2,4] [--min-bytes 4] [--max-bytes 268435456] [--budget 1.0] [--chunk BYTES]}.
 */
public final class RingBenchmark {
    private static final int MAX_ITERS = 2000;

    private RingBenchmark() {
    }

    /**
     * Float32 SUM allreduce of {@code bytes} from {@code buffer}, as {@code mpi_allreduce.c} does it: one op,
     * a warm-up of ~0.2 s, then timed ops each after a barrier; per op the slowest rank's time counts.
     * Rank 0 decides the iteration counts so every rank runs the same number of ops.
     *
     * @param nextSeq op sequence numbers, the same series on every rank
     * @return median microseconds per op over the timed ops (identical on every rank)
     */
    public static double measureAllreduce(Ring ring, ByteBuffer buffer, int bytes, double budgetSeconds,
            int minIters, LongSupplier nextSeq) {
        int count = bytes / 4;
        ByteBuffer control = ByteBuffer.allocateDirect(8).order(ByteOrder.LITTLE_ENDIAN);
        ring.barrier(nextSeq.getAsLong());
        long t0 = System.nanoTime();
        ring.allreduce(nextSeq.getAsLong(), buffer, DType.FLOAT32, count, ReduceOp.SUM);
        control.putDouble(0, (System.nanoTime() - t0) / 1e9);
        ring.broadcast(nextSeq.getAsLong(), control, 8, 0);
        double first = Math.max(control.getDouble(0), 1e-6);
        int warmup = (int) Math.max(1, Math.min(200, 0.2 / first));
        int iters = (int) Math.max(minIters, Math.min(MAX_ITERS, budgetSeconds / first));
        for (int i = 0; i < warmup; i++) {
            ring.allreduce(nextSeq.getAsLong(), buffer, DType.FLOAT32, count, ReduceOp.SUM);
        }
        ByteBuffer times = ByteBuffer.allocateDirect(iters * 8).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < iters; i++) {
            ring.barrier(nextSeq.getAsLong());
            long start = System.nanoTime();
            ring.allreduce(nextSeq.getAsLong(), buffer, DType.FLOAT32, count, ReduceOp.SUM);
            times.putDouble(i * 8, (System.nanoTime() - start) / 1e3);
        }
        ring.allreduce(nextSeq.getAsLong(), times, DType.FLOAT64, iters, ReduceOp.MAX);
        double[] t = new double[iters];
        for (int i = 0; i < iters; i++) {
            t[i] = times.getDouble(i * 8);
        }
        java.util.Arrays.sort(t);
        return iters % 2 == 1 ? t[iters / 2] : (t[iters / 2 - 1] + t[iters / 2]) / 2;
    }

    /**
     * Gets the JIT past the op paths before anything is timed (the first size would otherwise pay for it):
     * ~1 s of ops from 4 bytes to {@code maxBytes}, same count on every rank.
     */
    public static void warmUp(Ring ring, ByteBuffer buffer, int maxBytes, LongSupplier nextSeq) {
        for (int round = 0; round < 40; round++) {
            for (int bytes = 4; bytes <= maxBytes; bytes *= 8) {
                ring.barrier(nextSeq.getAsLong());
                ring.allreduce(nextSeq.getAsLong(), buffer, DType.FLOAT32, bytes / 4, ReduceOp.SUM);
            }
        }
    }

    /** One JSON line in the contract's format. */
    public static String json(int np, long bytes, double micros) {
        double algbw = bytes / (micros * 1e-6) / 1e9;
        double busbw = algbw * 2.0 * (np - 1) / np;
        return String.format(Locale.ROOT,
                "{\"bench\":\"allreduce\",\"dtype\":\"float32\",\"np\":%d,\"bytes\":%d,\"time_us\":%.2f,"
                        + "\"algbw_GBps\":%.3f,\"busbw_GBps\":%.3f}", np, bytes, micros, algbw, busbw);
    }

    public static void main(String[] args) throws Exception {
        List<Integer> nps = List.of(2, 4);
        long minBytes = 4;
        long maxBytes = 256L << 20;
        double budget = 1.0;
        DataPlaneOptions.Builder options = DataPlaneOptions.builder();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            String v = i + 1 < args.length ? args[++i] : "";
            switch (a) {
                case "--np" -> nps = java.util.Arrays.stream(v.split(",")).map(Integer::parseInt).toList();
                case "--min-bytes" -> minBytes = Long.parseLong(v);
                case "--max-bytes" -> maxBytes = Long.parseLong(v);
                case "--budget" -> budget = Double.parseDouble(v);
                case "--chunk" -> options.chunkBytes(Integer.parseInt(v));
                case "--sockbuf" -> options.socketBufferBytes(Integer.parseInt(v));
                default -> {
                    System.err.println("unknown argument: " + a);
                    System.exit(2);
                }
            }
        }
        for (int np : nps) {
            runThreads(np, minBytes, maxBytes, budget, options.build());
        }
    }

    private static void runThreads(int np, long minBytes, long maxBytes, double budget, DataPlaneOptions options)
            throws Exception {
        List<DataPlane> planes = new ArrayList<>();
        List<PeerAddress> peers = new ArrayList<>();
        for (int r = 0; r < np; r++) {
            ServerSocketChannel listener = DataPlane.bindEphemeral("127.0.0.1");
            DataPlane p = DataPlane.start(listener, "bench", options);
            planes.add(p);
            peers.add(new PeerAddress("127.0.0.1", p.port()));
        }
        ExecutorService pool = Executors.newFixedThreadPool(np);
        try {
            List<Future<?>> fs = new ArrayList<>();
            for (int r = 0; r < np; r++) {
                int rank = r;
                long lo = minBytes;
                long hi = maxBytes;
                fs.add(pool.submit(() -> {
                    try (Ring ring = planes.get(rank).openRing(1, rank, peers)) {
                        ByteBuffer buf = ByteBuffer.allocateDirect((int) hi).order(ByteOrder.LITTLE_ENDIAN);
                        long[] seq = {0};
                        warmUp(ring, buf, (int) Math.min(hi, 1 << 20), () -> ++seq[0]);
                        for (long bytes = lo; bytes <= hi; bytes *= 4) {
                            double us = measureAllreduce(ring, buf, (int) bytes, budget, 3, () -> ++seq[0]);
                            if (rank == 0) {
                                System.out.println(json(np, bytes, us));
                                System.out.flush();
                            }
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : fs) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
            planes.forEach(DataPlane::close);
        }
    }
}
