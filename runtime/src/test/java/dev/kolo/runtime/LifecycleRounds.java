package dev.kolo.runtime;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/**
 * Run in a child JVM by {@link LifecycleTest}: rounds of a job of two workers in this JVM (init, an allreduce,
 * close), as a user's test suite runs them. It prints {@code formed round=R} once the job formed and, after the
 * close, the live threads, open file descriptors and direct memory: {@code round=R threads=T fds=F direct=D
 * names=...}.
 */
public final class LifecycleRounds {
    private LifecycleRounds() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int basePort = Integer.parseInt(args[1]);
        int settled = Integer.MAX_VALUE;
        for (int round = 1; round <= rounds; round++) {
            String job = "lifecycle-" + round;
            // The defaults a user's test would use, but a port range of its own per test process.
            try (LocalJob j = LocalJob.start(job, 2, i -> KoloConfig.builder().jobName(job).np(2).metricsPort(0)
                    .set(Settings.CLUSTER_PORT, basePort).build())) {
                System.out.println("formed round=" + round);
                java.util.List<Float> sums = j.onAll(k -> k.allreduce("x", Tensor.of(new float[] {k.rank() + 1f}),
                        ReduceOp.SUM).toFloatArray()[0]);
                if (!sums.equals(java.util.List.of(3f, 3f))) {
                    throw new AssertionError("allreduce gave " + sums);
                }
            }
            System.gc();
            // A closed member's threads end on their own shortly after close returns: give them until a deadline
            // to get back to the last round's count (a leaked thread never does).
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (Thread.activeCount() > settled && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            settled = Thread.activeCount();
            // Direct buffers go when their cleaner runs, after a collection finds them: collect until two readings
            // in a row agree, so a round's figure is what is still held, not what is still to be freed.
            long direct = -1;
            while (direct != direct() && System.nanoTime() < deadline + 5_000_000_000L) {
                direct = direct();
                System.gc();
                Thread.sleep(100);
            }
            System.out.printf("round=%d threads=%d fds=%d direct=%d names=%s%n", round, Thread.activeCount(), fds(),
                    direct(), threadNames());
        }
    }

    private static long fds() throws Exception {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }

    private static long direct() {
        return ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(b -> b.getName().equals("direct")).mapToLong(BufferPoolMXBean::getMemoryUsed).sum();
    }

    private static String threadNames() {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                .map(n -> n.replaceAll("[0-9]+", "N")).sorted().distinct().reduce((a, b) -> a + "," + b).orElse("");
    }
}
