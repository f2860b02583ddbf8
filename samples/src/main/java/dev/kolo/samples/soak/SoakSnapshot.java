package dev.kolo.samples.soak;

import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * One rank's resources at one moment of a soak run: heap in use after a full GC, direct and mapped NIO
 * buffers, JavaCPP's native view (resident memory and the bytes its pointers hold), live threads and open
 * file descriptors. A value that cannot be read here is -1.
 */
record SoakSnapshot(double elapsedSeconds, long heapUsedBytes, long directBytes, long directCount, long mappedBytes,
                    long nativePhysicalBytes, long nativeTotalBytes, int threads, int fds) {

    /**
     * Collects garbage until direct memory stops falling: a collected direct buffer's memory is released by
     * its cleaner on another thread a little later, so one GC alone would count buffers already dead.
     */
    static SoakSnapshot take(double elapsedSeconds) {
        long direct = Long.MAX_VALUE;
        for (int i = 0; i < 20; i++) {
            System.gc();
            sleep(50);
            long now = pool("direct", false);
            if (now >= direct) {
                break;
            }
            direct = now;
        }
        direct = pool("direct", false);
        long directCount = pool("direct", true);
        long mapped = pool("mapped", false);
        return new SoakSnapshot(elapsedSeconds, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed(),
                direct, directCount, mapped, physicalBytes(), totalBytes(),
                ManagementFactory.getThreadMXBean().getThreadCount(), openFileDescriptors());
    }

    private static long pool(String name, boolean count) {
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals(name)) {
                return count ? pool.getCount() : pool.getMemoryUsed();
            }
        }
        return -1;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** JavaCPP's resident set size of the process (its natives load with the kernels), or -1. */
    private static long physicalBytes() {
        try {
            return org.bytedeco.javacpp.Pointer.physicalBytes();
        } catch (Throwable e) { // UnsatisfiedLinkError when the native kernels are not loaded (KOLO_KERNELS=java)
            return -1;
        }
    }

    /** Bytes held by live JavaCPP pointers, or -1. */
    private static long totalBytes() {
        try {
            return org.bytedeco.javacpp.Pointer.totalBytes();
        } catch (Throwable e) {
            return -1;
        }
    }

    private static int openFileDescriptors() {
        int n = 0;
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
            for (Path ignored : fds) {
                n++;
            }
        } catch (IOException | UnsupportedOperationException e) {
            return -1; // not Linux
        }
        return n - 1; // the directory stream's own descriptor
    }

    String json() {
        return String.format(Locale.ROOT, "\"heap_used_bytes\":%d,\"direct_bytes\":%d,\"direct_count\":%d,"
                + "\"mapped_bytes\":%d,\"native_physical_bytes\":%d,\"native_total_bytes\":%d,\"threads\":%d,"
                + "\"fds\":%d", heapUsedBytes, directBytes, directCount, mappedBytes, nativePhysicalBytes,
                nativeTotalBytes, threads, fds);
    }

    String text() {
        return String.format(Locale.ROOT, "heap %.1f MiB, direct %.1f MiB in %d buffers, mapped %.1f MiB, "
                + "resident %.1f MiB, javacpp %d B, %d threads, %d fds", mib(heapUsedBytes), mib(directBytes),
                directCount, mib(mappedBytes), mib(nativePhysicalBytes), nativeTotalBytes, threads, fds);
    }

    static double mib(long bytes) {
        return bytes / 1048576.0;
    }
}
