package dev.kolo.runtime;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/** CPU used by this whole process (every worker of an in-JVM job, the JVM's own threads): to see a spin. */
final class ProcessCpu {
    private static final com.sun.management.OperatingSystemMXBean OS =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();

    /**
     * @param share CPU time over the window as a share of one core (1.0 = a core busy all along)
     * @param threads the threads that used more than 1% of a core, for the failure message
     */
    record Sample(double share, String threads) {
        @Override
        public String toString() {
            return Math.round(share * 1000) / 10.0 + "% of a core (" + threads + ")";
        }
    }

    private ProcessCpu() {
    }

    /** Measures the process over {@code window}. */
    static Sample over(Duration window) throws InterruptedException {
        ThreadMXBean mx = ManagementFactory.getThreadMXBean();
        Map<Long, Long> before = new HashMap<>();
        for (long id : mx.getAllThreadIds()) {
            before.put(id, mx.getThreadCpuTime(id));
        }
        long cpu0 = OS.getProcessCpuTime();
        long t0 = System.nanoTime();
        Thread.sleep(window.toMillis()); // the measurement window itself, not a wait for a condition
        long elapsed = System.nanoTime() - t0;
        long cpu = OS.getProcessCpuTime() - cpu0;
        StringBuilder hot = new StringBuilder();
        for (long id : mx.getAllThreadIds()) {
            long used = mx.getThreadCpuTime(id) - before.getOrDefault(id, 0L);
            ThreadInfo info = mx.getThreadInfo(id);
            if (used > elapsed / 100 && info != null) {
                hot.append(hot.length() == 0 ? "" : ", ").append(info.getThreadName()).append(' ')
                        .append(used / 1_000_000).append(" ms");
            }
        }
        return new Sample((double) cpu / elapsed, hot.toString());
    }

    /**
     * Measures {@code window} after {@code window} until one is under {@code share} of a core or {@code limit}
     * has passed, and returns the last. The process also runs what a test cannot stop (the cluster settling
     * after a change, the garbage of earlier tests, the compiler), which comes and goes; a thread that spins
     * stays, and fails every window.
     */
    static Sample firstQuietWindow(Duration window, double share, Duration limit) throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        Sample last;
        do {
            last = over(window);
        } while (last.share() >= share && System.nanoTime() < deadline);
        return last;
    }

    /** Waits until the process is quiet (a freshly formed cluster migrates partitions for a few seconds). */
    static void awaitQuiet(double share, Duration limit) throws InterruptedException {
        Sample last = firstQuietWindow(Duration.ofMillis(500), share, limit);
        if (last.share() >= share) {
            throw new AssertionError("the process never became quiet within " + limit.toSeconds() + " s: " + last);
        }
    }
}
