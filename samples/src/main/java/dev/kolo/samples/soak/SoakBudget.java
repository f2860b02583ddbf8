package dev.kolo.samples.soak;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The tolerances of a soak run: how much each resource may grow between the end of the warm-up and the end
 * of the run before the run counts as leaking. The steps allocate and drop result tensors all the time, so
 * the numbers leave room for what is in flight and for allocator noise, not for growth per step.
 *
 * <ul>
 *   <li>heap in use after a full GC: 32 MiB</li>
 *   <li>direct buffers: 64 MiB (a few steps' results may wait for their cleaner)</li>
 *   <li>resident memory (JavaCPP {@code Pointer.physicalBytes()}): 256 MiB. Resident memory also moves with
 *       what is no leak: the JIT compilers' arenas and code cache (on a loaded machine compilation goes on
 *       long after the warm-up) and memory malloc keeps after direct buffers are freed. Measured: +1 to +27 MiB
 *       on a quiet machine, up to +173 MiB on a loaded one, with heap and direct memory flat. Leaks of direct
 *       buffers and JavaCPP memory are caught by their own, tight counts.</li>
 *   <li>bytes of live JavaCPP pointers: 16 MiB</li>
 *   <li>threads: 4; open file descriptors: 8</li>
 * </ul>
 */
final class SoakBudget {
    static final long HEAP_BYTES = 32L << 20;
    static final long DIRECT_BYTES = 64L << 20;
    static final long RESIDENT_BYTES = 256L << 20;
    static final long JAVACPP_BYTES = 16L << 20;
    static final int THREADS = 4;
    static final int FDS = 8;

    private SoakBudget() {
    }

    /** The outcome: growth of each resource, and what exceeded its tolerance (empty reason if nothing). */
    record Verdict(long heap, long direct, long resident, long javacpp, int threads, int fds, String reason) {
        boolean ok() {
            return reason.isEmpty();
        }

        String growthJson() {
            return String.format(Locale.ROOT, "\"heap_growth_bytes\":%d,\"direct_growth_bytes\":%d,"
                    + "\"native_physical_growth_bytes\":%d,\"native_total_growth_bytes\":%d,\"threads_growth\":%d,"
                    + "\"fds_growth\":%d", heap, direct, resident, javacpp, threads, fds);
        }

        String growthText() {
            return String.format(Locale.ROOT, "heap %+.1f MiB, direct %+.1f MiB, resident %+.1f MiB, javacpp %+d B, "
                    + "threads %+d, fds %+d", SoakSnapshot.mib(heap), SoakSnapshot.mib(direct),
                    SoakSnapshot.mib(resident), javacpp, threads, fds);
        }
    }

    static Verdict judge(SoakSnapshot start, SoakSnapshot end) {
        List<String> over = new ArrayList<>();
        long heap = end.heapUsedBytes() - start.heapUsedBytes();
        long direct = end.directBytes() - start.directBytes();
        long resident = end.nativePhysicalBytes() < 0 || start.nativePhysicalBytes() < 0 ? 0
                : end.nativePhysicalBytes() - start.nativePhysicalBytes();
        long javacpp = end.nativeTotalBytes() < 0 || start.nativeTotalBytes() < 0 ? 0
                : end.nativeTotalBytes() - start.nativeTotalBytes();
        int threads = end.threads() - start.threads();
        int fds = end.fds() < 0 || start.fds() < 0 ? 0 : end.fds() - start.fds();
        check(over, "heap in use after GC", heap, HEAP_BYTES, true);
        check(over, "direct buffer memory", direct, DIRECT_BYTES, true);
        check(over, "resident memory", resident, RESIDENT_BYTES, true);
        check(over, "JavaCPP pointer memory", javacpp, JAVACPP_BYTES, true);
        check(over, "live threads", threads, THREADS, false);
        check(over, "open file descriptors", fds, FDS, false);
        return new Verdict(heap, direct, resident, javacpp, threads, fds, String.join("; ", over));
    }

    private static void check(List<String> over, String what, long growth, long limit, boolean bytes) {
        if (growth > limit) {
            over.add(what + " grew by " + (bytes ? String.format(Locale.ROOT, "%.1f MiB", SoakSnapshot.mib(growth))
                    : growth) + " (tolerance " + (bytes ? (limit >> 20) + " MiB" : limit) + ")");
        }
    }
}
