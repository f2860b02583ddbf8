package dev.kolo.testing;

import java.lang.management.ManagementFactory;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The oracles every fuzz target shares, besides "only the documented rejection": one input
 * may allocate at most a budget of heap (a decoder must not size memory by an unchecked length) and may
 * run at most {@link #HANG_SECONDS} (a watchdog prints the input and the stuck stack, then halts the JVM,
 * which fails the build: a hang cannot be thrown from another thread).
 */
public final class FuzzLimits {
    static final long HANG_SECONDS = 10;
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    private static final java.lang.management.ClassLoadingMXBean CLASSES = ManagementFactory.getClassLoadingMXBean();
    private static volatile long startedAt;
    private static volatile byte[] current;
    private static volatile Thread fuzzThread;

    static {
        Thread watchdog = new Thread(FuzzLimits::watch, "fuzz-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
    }

    /** Something to run on one input. */
    public interface Body {
        void run() throws Exception;
    }

    private FuzzLimits() {
    }

    /** Runs {@code body} on {@code input}, failing if it allocates more than {@code heapBudget} bytes. */
    public static void run(byte[] input, long heapBudget, Body body) throws Exception {
        long classes = CLASSES.getTotalLoadedClassCount();
        long before = THREADS.getCurrentThreadAllocatedBytes();
        current = input;
        fuzzThread = Thread.currentThread();
        startedAt = System.nanoTime();
        try {
            body.run();
        } finally {
            startedAt = 0;
        }
        long allocated = THREADS.getCurrentThreadAllocatedBytes() - before;
        // Loading (and instrumenting) a class allocates on the loading thread: once per class, not per input.
        if (allocated > heapBudget && CLASSES.getTotalLoadedClassCount() == classes) {
            throw new AssertionError("one input of " + input.length + " bytes allocated " + allocated
                    + " bytes of heap, more than its budget of " + heapBudget);
        }
    }

    private static void watch() {
        while (true) {
            try {
                Thread.sleep(500);
            } catch (InterruptedException e) {
                return;
            }
            long t = startedAt;
            if (t != 0 && System.nanoTime() - t > TimeUnit.SECONDS.toNanos(HANG_SECONDS)) {
                StringBuilder sb = new StringBuilder("FUZZ HANG: one input ran longer than " + HANG_SECONDS
                        + " s; input (base64): " + Base64.getEncoder().encodeToString(current) + "\n");
                Thread stuck = fuzzThread;
                for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
                    if (e.getKey() == stuck) {
                        for (StackTraceElement f : e.getValue()) {
                            sb.append("    at ").append(f).append('\n');
                        }
                    }
                }
                System.err.println(sb);
                System.err.flush();
                Runtime.getRuntime().halt(97);
            }
        }
    }
}
