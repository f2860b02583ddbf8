package dev.kolo.samples.soak;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import dev.kolo.samples.console.Progress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The steps of a soak run on one rank, like a training job's: thousands of small gradients allreduced as they
 * become ready (some in place, some into new tensors, some as one grouped call), two large allreduces, an
 * allgather of rows that differ per rank, and a broadcast from a root that moves every step. Every value of
 * every result is compared with what it must be; the inputs are small integers, so float32 sums are exact.
 * Rank 0's clock decides, through a tiny allreduce at the start of each step, when the warm-up ends and when
 * the run stops, so every rank measures and stops at the same step.
 */
final class SoakRun {
    /** The measurements and counts of a finished run. */
    record Result(SoakSnapshot start, long startStep, SoakSnapshot end, long steps, long checkedValues) {
    }

    private static final int ALLGATHER_ROW = 16;
    private static final int BROADCAST_FLOATS = 256 * 1024;

    private final Kolo kolo;
    private final int rank;
    private final int size;
    private final int grouped;
    private final int[] smallCounts;
    private final ByteBuffer[] smallData;
    private final Tensor[] small;
    private final String[] smallNames;
    private final int largeCount;
    private final ByteBuffer[] largeData = new ByteBuffer[2];
    private final Tensor[] large = new Tensor[2];
    private final ByteBuffer gatherData;
    private final Tensor gather;
    private final ByteBuffer broadcastData;
    private final Tensor broadcast;
    private long checked;

    SoakRun(Kolo kolo, int smallTensors, int largeBytes) {
        this.kolo = kolo;
        this.rank = kolo.rank();
        this.size = kolo.size();
        this.grouped = Math.min(256, Math.max(1, smallTensors / 8));
        this.smallCounts = new int[smallTensors];
        this.smallData = new ByteBuffer[smallTensors];
        this.small = new Tensor[smallTensors];
        this.smallNames = new String[smallTensors];
        for (int i = 0; i < smallTensors; i++) {
            smallCounts[i] = 64 << (i % 5);
            smallData[i] = direct(smallCounts[i]);
            small[i] = Tensor.wrap(DType.FLOAT32, smallData[i], smallCounts[i]);
            smallNames[i] = "soak/s/" + i;
        }
        this.largeCount = largeBytes / 4;
        for (int k = 0; k < 2; k++) {
            largeData[k] = direct(largeCount);
            large[k] = Tensor.wrap(DType.FLOAT32, largeData[k], largeCount);
        }
        int rows = rank + 1;
        this.gatherData = direct(rows * ALLGATHER_ROW);
        this.gather = Tensor.wrap(DType.FLOAT32, gatherData, rows, ALLGATHER_ROW);
        this.broadcastData = direct(BROADCAST_FLOATS);
        this.broadcast = Tensor.wrap(DType.FLOAT32, broadcastData, BROADCAST_FLOATS);
    }

    private static ByteBuffer direct(int floats) {
        return ByteBuffer.allocateDirect(floats * 4).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** How rank 0's progress lines start. */
    static final String PROGRESS_PREFIX = "soak: ";

    Result run(long warmupNanos, long totalNanos) {
        long t0 = System.nanoTime();
        SoakSnapshot start = null;
        long startStep = 0;
        long step = 0;
        // A run of many minutes is not silent: rank 0 says where it is.
        Progress progress = Progress.on(System.out);
        while (true) {
            long elapsed = System.nanoTime() - t0;
            if (rank == 0 && progress.due()) {
                progress.show((double) elapsed / totalNanos, String.format(java.util.Locale.ROOT,
                        PROGRESS_PREFIX + "%d s of %d s, %d steps, %d values checked, no error", elapsed / 1_000_000_000L,
                        totalNanos / 1_000_000_000L, step, checked));
            }
            float[] flags = {elapsed >= totalNanos ? 1 : 0, elapsed >= warmupNanos ? 1 : 0};
            float[] agreed = kolo.allreduce("soak/control", Tensor.of(rank == 0 ? flags : new float[2], 2),
                    ReduceOp.MAX).toFloatArray();
            if (agreed[1] > 0 && start == null) {
                start = SoakSnapshot.take((System.nanoTime() - t0) / 1e9);
                startStep = step;
            }
            if (agreed[0] > 0) {
                break;
            }
            step(step++);
        }
        progress.done();
        if (start == null) {
            start = SoakSnapshot.take((System.nanoTime() - t0) / 1e9);
            startStep = step;
        }
        return new Result(start, startStep, SoakSnapshot.take((System.nanoTime() - t0) / 1e9), step, checked);
    }

    private void step(long step) {
        int n = small.length;
        // Gradients released one by one, as a backward pass does; half reduce in place, half into new tensors.
        for (int i = 0; i < n; i++) {
            fillSmall(i, step);
        }
        List<CompletableFuture<Tensor>> pending = new ArrayList<>(n - grouped);
        for (int i = grouped; i < n; i++) {
            pending.add(i % 2 == 0 ? kolo.allreduceInPlaceAsync(smallNames[i], small[i], ReduceOp.SUM, 1.0, 1.0)
                    : kolo.allreduceAsync(smallNames[i], small[i], ReduceOp.SUM));
        }
        List<Tensor> groupIn = new ArrayList<>(grouped);
        for (int i = 0; i < grouped; i++) {
            groupIn.add(small[i]);
        }
        List<Tensor> groupOut = kolo.groupedAllreduce("soak/g", groupIn, ReduceOp.SUM);
        for (int i = 0; i < grouped; i++) {
            checkSmall("grouped allreduce", i, step, groupOut.get(i));
        }
        for (int i = grouped; i < n; i++) {
            checkSmall("allreduce", i, step, pending.get(i - grouped).join());
        }
        // Two large allreduces: one in place, one into a new tensor.
        for (int k = 0; k < 2; k++) {
            int kk = k;
            fill(largeData[k], largeCount, j -> ((j + step + kk) % 5) + rank);
        }
        kolo.allreduceInPlace("soak/large/0", large[0], ReduceOp.SUM);
        Tensor largeOut = kolo.allreduce("soak/large/1", large[1], ReduceOp.SUM);
        for (int k = 0; k < 2; k++) {
            int kk = k;
            check("allreduce 'soak/large/" + k + "'", step, k == 0 ? large[0] : largeOut, largeCount,
                    j -> size * (double) ((j + step + kk) % 5) + rankSum());
        }
        // Allgather: rank r contributes r + 1 rows.
        int rows = rank + 1;
        fill(gatherData, rows * ALLGATHER_ROW, j -> rank * 100 + (step % 50) + j / ALLGATHER_ROW);
        Tensor gathered = kolo.allgather("soak/gather", gather);
        int total = size * (size + 1) / 2;
        if (gathered.shape()[0] != total) {
            throw fail(step, "allgather 'soak/gather' returned " + gathered.shape()[0] + " rows, expected " + total);
        }
        check("allgather 'soak/gather'", step, gathered, total * ALLGATHER_ROW, j -> {
            int row = j / ALLGATHER_ROW;
            int r = 0;
            while (row >= r + 1) { // rank r's rows come after those of ranks 0..r-1
                row -= r + 1;
                r++;
            }
            return r * 100 + (step % 50) + row;
        });
        // Broadcast from a root that moves every step; non-roots offer garbage that must not survive.
        int root = (int) (step % size);
        fill(broadcastData, BROADCAST_FLOATS, j -> rank == root ? root * 1000 + (j + step) % 17 : -1);
        check("broadcast 'soak/bcast'", step, kolo.broadcast("soak/bcast", broadcast, root), BROADCAST_FLOATS,
                j -> root * 1000 + (j + step) % 17);
    }

    private double rankSum() {
        return size * (size - 1) / 2.0;
    }

    private void fillSmall(int i, long step) {
        fill(smallData[i], smallCounts[i], j -> ((step * 7 + i * 3L + j) % 13) + rank);
    }

    private void checkSmall(String op, int i, long step, Tensor result) {
        check(op + " '" + smallNames[i] + "'", step, result, smallCounts[i],
                j -> size * (double) ((step * 7 + i * 3L + j) % 13) + rankSum());
    }

    private static void fill(ByteBuffer b, int count, java.util.function.IntToDoubleFunction value) {
        FloatBuffer f = b.duplicate().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
        for (int j = 0; j < count; j++) {
            f.put(j, (float) value.applyAsDouble(j));
        }
    }

    private void check(String what, long step, Tensor t, int count, java.util.function.IntToDoubleFunction expected) {
        if (t.numElements() != count) {
            throw fail(step, what + " returned " + t.numElements() + " elements, expected " + count);
        }
        FloatBuffer f = t.buffer().asFloatBuffer();
        for (int j = 0; j < count; j++) {
            float want = (float) expected.applyAsDouble(j);
            if (f.get(j) != want) {
                throw fail(step, what + " element " + j + " is " + f.get(j) + ", expected " + want);
            }
        }
        checked += count;
    }

    private KoloException fail(long step, String what) {
        return new KoloException("soak: wrong result at step " + step + " on rank " + rank + ": " + what);
    }
}
