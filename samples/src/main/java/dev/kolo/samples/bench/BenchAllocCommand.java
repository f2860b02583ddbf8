package dev.kolo.samples.bench;

import com.sun.management.ThreadMXBean;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import dev.kolo.samples.launch.KoloVersion;
import dev.kolo.samples.launch.NpOption;
import java.lang.management.ManagementFactory;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench alloc -np N}: heap bytes allocated per steady-state allreduce of a cached tensor (blocking, in
 * place, float32 SUM), measured by the JVM's per-thread allocation counters
 * ({@code com.sun.management.ThreadMXBean.getThreadAllocatedBytes}) on the calling thread and on the rank's
 * collective thread, which together run the engine; other threads (the cluster's, the event bus's) are
 * reported apart. After a warm-up long enough for the JIT to compile the hot path (escape analysis removes
 * allocations the interpreter makes), rank 0 prints one JSON line.
 */
@Command(name = "alloc", description = "Heap bytes allocated per cached steady-state allreduce.",
        mixinStandardHelpOptions = true, versionProvider = KoloVersion.class, sortOptions = false)
public final class BenchAllocCommand implements Callable<Integer> {
    @Mixin
    NpOption workers = new NpOption();

    @Option(names = "--bytes", paramLabel = "B", defaultValue = "4096",
            description = "Size of the allreduced tensor (default: ${DEFAULT-VALUE}).")
    int bytes;

    @Option(names = "--ops", paramLabel = "N", defaultValue = "20000",
            description = "Measured ops, after as many warm-up ops (default: ${DEFAULT-VALUE}).")
    int ops;

    @Mixin
    BenchWorkers role = new BenchWorkers();

    @Override
    public Integer call() {
        if (bytes < 4 || ops < 1) {
            throw new IllegalArgumentException("need --bytes >= 4 and --ops >= 1");
        }
        if (!role.isWorker()) {
            return role.launch("alloc", workers.np());
        }
        ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (Kolo kolo = BenchWorkers.joinJob(KoloConfig.builderFromEnvironment())) {
            Tensor t = Tensor.allocate(DType.FLOAT32, bytes / 4);
            for (int i = 0; i < ops; i++) {
                kolo.allreduceInPlace("alloc", t, ReduceOp.SUM);
            }
            kolo.barrier();
            long[] before = perThread(threads);
            for (int i = 0; i < ops; i++) {
                kolo.allreduceInPlace("alloc", t, ReduceOp.SUM);
            }
            long[] after = perThread(threads);
            if (kolo.rank() == 0) {
                System.out.printf(Locale.ROOT, "{\"bench\":\"alloc\",\"np\":%d,\"bytes\":%d,\"ops\":%d,"
                        + "\"caller_bytes_per_op\":%.1f,\"collective_bytes_per_op\":%.1f,"
                        + "\"other_threads_bytes_per_op\":%.1f,\"bytes_per_op\":%.1f}%n", kolo.size(), bytes, ops,
                        perOp(after[0] - before[0]), perOp(after[1] - before[1]), perOp(after[2] - before[2]),
                        perOp(after[0] - before[0] + after[1] - before[1]));
            }
        }
        return 0;
    }

    private double perOp(long allocated) {
        return (double) allocated / ops;
    }

    /**
     * @return bytes allocated so far by this thread, by the collective threads, by every other thread (the
     *         counters of threads that ended are lost, so "other" is a lower bound)
     */
    private static long[] perThread(ThreadMXBean threads) {
        long caller = threads.getCurrentThreadAllocatedBytes();
        long collective = 0;
        long other = 0;
        Thread me = Thread.currentThread();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t == me) {
                continue;
            }
            long allocated = threads.getThreadAllocatedBytes(t.getId());
            if (allocated < 0) {
                continue;
            }
            if (t.getName().startsWith("kolo-collectives-")) {
                collective += allocated;
            } else {
                other += allocated;
            }
        }
        return new long[] {caller, collective, other};
    }
}
