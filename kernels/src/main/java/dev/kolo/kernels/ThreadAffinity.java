package dev.kolo.kernels;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The CPUs this process's threads may run on, which the JDK can read only as a count and cannot set. Ranks that
 * share a host bind every thread of their process to their own share of its CPUs (as {@code mpirun --bind-to}
 * does), so that the scheduler cannot stack two ranks' polling threads on one core while another idles. Linux
 * only, through the native library; elsewhere {@link #isAvailable()} is false and nothing is bound.
 */
public final class ThreadAffinity {
    /** Most CPUs read (the kernel's {@code CPU_SETSIZE}). */
    private static final int MAX_CPUS = 1024;
    private static final Path THREADS = Path.of("/proc/self/task");
    /**
     * Threads started while the threads are listed inherit their creator's CPUs, which may not be bound yet:
     * listing again until a pass binds no new thread catches them; a few passes suffice (a thread pool's start).
     */
    private static final int MAX_PASSES = 5;

    private ThreadAffinity() {
    }

    /** @return whether CPUs can be read and bound here (Linux, native library loaded) */
    public static boolean isAvailable() {
        return NativeKernels.isAvailable() && Files.isDirectory(THREADS);
    }

    /** @return the CPUs the calling thread may run on, ascending; empty where not {@link #isAvailable()} */
    public static int[] allowedCpus() {
        if (!isAvailable()) {
            return new int[0];
        }
        int[] cpus = new int[MAX_CPUS];
        int n = KoloNativeLib.kolo_allowed_cpus(cpus, cpus.length);
        return n <= 0 ? new int[0] : Arrays.copyOf(cpus, Math.min(n, cpus.length));
    }

    /**
     * Binds every thread of this process, and so every thread they start later, to {@code cpus}.
     *
     * @return how many threads were bound
     * @throws IllegalStateException where not {@link #isAvailable()}, or if the kernel refuses the CPUs (none of
     *                               them usable by this process)
     */
    public static int bindProcess(int[] cpus) {
        if (!isAvailable()) {
            throw new IllegalStateException("CPU affinity needs Linux and Kolo's native library");
        }
        if (cpus.length == 0) {
            throw new IllegalArgumentException("no CPUs to bind to");
        }
        int[] list = cpus.clone();
        long[] done = new long[0];
        int bound = 0;
        for (int pass = 0; pass < MAX_PASSES; pass++) {
            long[] tids = threadIds();
            int before = bound;
            for (long tid : tids) {
                if (Arrays.binarySearch(done, tid) >= 0) {
                    continue;
                }
                int error = KoloNativeLib.kolo_bind_thread((int) tid, list, list.length);
                if (error == 0) {
                    bound++;
                } else if (error != ESRCH) { // a thread that ended meanwhile needs nothing
                    throw new IllegalStateException("the kernel refused to bind thread " + tid + " to CPUs "
                            + Arrays.toString(list) + " (errno " + error + ")");
                }
            }
            done = tids;
            if (bound == before && pass > 0) {
                break;
            }
        }
        return bound;
    }

    /** @return {@code cpus} (ascending) as the kernel writes a CPU list, e.g. {@code 0-3,6} */
    public static String cpuList(int[] cpus) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < cpus.length; i++) {
            int j = i;
            while (j + 1 < cpus.length && cpus[j + 1] == cpus[j] + 1) {
                j++;
            }
            s.append(s.length() == 0 ? "" : ",").append(cpus[i]);
            if (j > i) {
                s.append('-').append(cpus[j]);
            }
            i = j;
        }
        return s.toString();
    }

    /** The error number of a thread that has ended. */
    private static final int ESRCH = 3;

    /** @return the kernel ids of this process's threads, ascending */
    private static long[] threadIds() {
        long[] ids = new long[64];
        int n = 0;
        try (DirectoryStream<Path> threads = Files.newDirectoryStream(THREADS)) {
            for (Path t : threads) {
                if (n == ids.length) {
                    ids = Arrays.copyOf(ids, 2 * n);
                }
                ids[n++] = Long.parseLong(t.getFileName().toString());
            }
        } catch (IOException e) {
            throw new IllegalStateException("cannot list this process's threads in " + THREADS + ": " + e, e);
        }
        long[] sorted = Arrays.copyOf(ids, n);
        Arrays.sort(sorted);
        return sorted;
    }
}
