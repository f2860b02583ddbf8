package dev.kolo.samples.bench;

import dev.kolo.kernels.ElementType;
import dev.kolo.kernels.HalfFloats;
import dev.kolo.kernels.Kernels;
import dev.kolo.kernels.NativeKernels;
import dev.kolo.kernels.ReductionOp;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Bandwidth of the kernels beside a plain memory copy measured in the same run: SUM on
 * float32/float16/bfloat16 and float32 to float16/bfloat16 conversion, at 64 KiB, 1 MiB and
 * 64 MiB, for the native and the Java implementation. Run by {@code worker.jar bench kernels}
 * ({@link BenchKernelsCommand}); it lives here, not in the kernels library, so the library carries no
 * benchmark.
 *
 * <p>GB/s counts bytes moved (10^9 bytes per second): two reads and one write of an operand for a
 * reduce, one read and one write for a conversion or a copy. The copy baseline is the better of
 * native memcpy and {@link ByteBuffer#put(int, ByteBuffer, int, int)}. Each case is warmed up,
 * then timed in three rounds within its time budget, and the best round is reported, so the
 * whole run takes about 20 s.
 */
public final class KernelBenchmark {

    static final int[] DEFAULT_SIZES = {64 << 10, 1 << 20, 64 << 20};
    static final long DEFAULT_BUDGET_NANOS = 300_000_000L;

    private static final ElementType[] SUM_TYPES = {ElementType.FLOAT32, ElementType.FLOAT16, ElementType.BFLOAT16};
    private static final ElementType[] HALF_TYPES = {ElementType.FLOAT16, ElementType.BFLOAT16};

    private KernelBenchmark() {
    }

    /**
     * Runs the benchmark and prints the results: with {@code json}, one object per line, e.g.
     * {@code {"bench":"kernels","impl":"native","op":"sum","dtype":"float32","bytes":65536,"GBps":41.2}}
     * (impl {@code copy} rows carry op {@code "copy"} and dtype {@code "uint8"}); otherwise a table.
     */
    public static void run(PrintStream out, boolean json) {
        run(out, json, DEFAULT_SIZES, DEFAULT_BUDGET_NANOS);
    }

    static void run(PrintStream out, boolean json, int[] sizes, long budgetNanos) {
        int max = 0;
        for (int size : sizes) {
            max = Math.max(max, size);
        }
        ByteBuffer a = ByteBuffer.allocateDirect(max).order(ByteOrder.nativeOrder());
        ByteBuffer b = ByteBuffer.allocateDirect(max).order(ByteOrder.nativeOrder());
        ByteBuffer c = ByteBuffer.allocateDirect(max).order(ByteOrder.nativeOrder());
        boolean hasNative = NativeKernels.isAvailable();
        List<Kernels> impls = new ArrayList<>();
        if (hasNative) {
            impls.add(Kernels.nativeKernels().orElseThrow());
        }
        impls.add(Kernels.java());

        List<Result> results = new ArrayList<>();
        for (int size : sizes) {
            double memcpy = hasNative ? measure(budgetNanos, 2.0 * size, () -> nativeCopy(c, a, size)) : 0;
            double put = measure(budgetNanos, 2.0 * size, () -> c.put(0, a, 0, size));
            results.add(new Result("copy", "copy", "uint8", size, Math.max(memcpy, put),
                    memcpy >= put ? "memcpy" : "ByteBuffer.put"));
            for (ElementType type : SUM_TYPES) {
                for (Kernels k : impls) {
                    fill(k, type, a, size);
                    fill(k, type, b, size);
                    long count = size / type.byteSize();
                    double gbps = measure(budgetNanos, 3.0 * size,
                            () -> k.reduce(type, ReductionOp.SUM, a, 0, b, 0, count));
                    results.add(new Result(k.name(), "sum", type.label(), size, gbps, null));
                }
            }
            for (ElementType half : HALF_TYPES) {
                for (Kernels k : impls) {
                    fill(k, ElementType.FLOAT32, a, size);
                    long count = size / 4;
                    double gbps = measure(budgetNanos, 1.5 * size,
                            () -> k.convert(half, c, 0, ElementType.FLOAT32, a, 0, count));
                    results.add(new Result(k.name(), "convert", half.label(), size, gbps, null));
                }
            }
        }
        if (json) {
            for (Result r : results) {
                out.println(r.json());
            }
        } else {
            printTable(out, results, hasNative);
        }
        out.flush();
    }

    private static void nativeCopy(ByteBuffer dst, ByteBuffer src, int size) {
        NativeKernels.copy(NativeKernels.address(dst), NativeKernels.address(src), size);
    }

    /** Values in [0.5, 1.5): no overflow, no subnormals, however many times the sum repeats. */
    private static void fill(Kernels k, ElementType type, ByteBuffer buf, int size) {
        int n = size / type.byteSize();
        for (int i = 0; i < n; i++) {
            float v = 0.5f + (i * 0x9E3779B9L & 0xFFFF) / 65536f;
            switch (type) {
                case FLOAT32:
                    buf.putFloat(i * 4, v);
                    break;
                case FLOAT16:
                    buf.putShort(i * 2, HalfFloats.floatToHalf(v));
                    break;
                default:
                    buf.putShort(i * 2, HalfFloats.floatToBfloat16(v));
                    break;
            }
        }
    }

    /** Best GB/s of three timed rounds, after a warm-up of one round. */
    private static double measure(long budgetNanos, double bytesMoved, Runnable op) {
        long round = Math.max(1, budgetNanos / 4);
        timeRound(round, op);
        double best = 0;
        for (int r = 0; r < 3; r++) {
            best = Math.max(best, timeRound(round, op) * bytesMoved / 1e9);
        }
        return best;
    }

    /** Calls per second over one round of at least {@code nanos}. */
    private static double timeRound(long nanos, Runnable op) {
        long start = System.nanoTime();
        long calls = 0;
        long elapsed;
        do {
            op.run();
            calls++;
            elapsed = System.nanoTime() - start;
        } while (elapsed < nanos);
        return calls * 1e9 / elapsed;
    }

    private static void printTable(PrintStream out, List<Result> results, boolean hasNative) {
        out.println("Kolo kernels benchmark: GB/s of bytes moved (reduce: 2 reads + 1 write; convert/copy: read + write)");
        out.println(hasNative
                ? "native kernels: " + NativeKernels.isa()
                : "native kernels unavailable (" + NativeKernels.unavailableCause().map(Throwable::toString).orElse("?") + ")");
        out.printf(Locale.ROOT, "%-8s %-9s %8s %9s %9s %9s %12s %12s%n",
                "op", "dtype", "size", "native", "java", "copy", "native/copy", "java/native");
        for (Result copy : results) {
            if (!copy.impl.equals("copy")) {
                continue;
            }
            for (Result r : results) {
                if (r.bytes != copy.bytes || !r.impl.equals("java")) {
                    continue;
                }
                Result nat = find(results, "native", r.op, r.dtype, r.bytes);
                double n = nat == null ? Double.NaN : nat.gbps;
                out.printf(Locale.ROOT, "%-8s %-9s %8s %9.2f %9.2f %9.2f %11.0f%% %11.0f%%%n",
                        r.op, r.dtype, sizeLabel(r.bytes), n, r.gbps, copy.gbps,
                        100 * n / copy.gbps, 100 * r.gbps / n);
            }
        }
        for (Result copy : results) {
            if (copy.impl.equals("copy")) {
                out.printf(Locale.ROOT, "copy baseline at %s: %s%n", sizeLabel(copy.bytes), copy.note);
            }
        }
    }

    private static Result find(List<Result> results, String impl, String op, String dtype, long bytes) {
        for (Result r : results) {
            if (r.impl.equals(impl) && r.op.equals(op) && r.dtype.equals(dtype) && r.bytes == bytes) {
                return r;
            }
        }
        return null;
    }

    private static String sizeLabel(long bytes) {
        return bytes >= (1 << 20) ? (bytes >> 20) + " MiB" : (bytes >> 10) + " KiB";
    }

    private static final class Result {
        final String impl;
        final String op;
        final String dtype;
        final long bytes;
        final double gbps;
        final String note;

        Result(String impl, String op, String dtype, long bytes, double gbps, String note) {
            this.impl = impl;
            this.op = op;
            this.dtype = dtype;
            this.bytes = bytes;
            this.gbps = gbps;
            this.note = note;
        }

        String json() {
            return String.format(Locale.ROOT,
                    "{\"bench\":\"kernels\",\"impl\":\"%s\",\"op\":\"%s\",\"dtype\":\"%s\",\"bytes\":%d,\"GBps\":%.3f}",
                    impl, op, dtype, bytes, gbps);
        }
    }
}
