package dev.kolo.runtime;

import dev.kolo.testing.StdinWatch;
import java.nio.ByteOrder;
import java.nio.FloatBuffer;
import java.util.concurrent.locks.LockSupport;

/**
 * A worker process for failure tests: allreduces 64 MiB in a loop until a peer is lost, then prints how
 * the loss surfaced and exits with status 3. Ends itself when its standard input closes.
 *
 * <p>Every iteration starts from ones, so a value of 2 in the tensor can only be a peer's chunk reduced into it
 * mid-op (a tensor this large is reduced in place; the finished sum is 3). A watcher thread prints
 * {@code loop inflight iteration=i} the first time it sees one in iteration {@code i}: the op is on the wire,
 * a peer's first chunk has arrived, and the rest of the op is still to come.
 */
public final class AllreduceLoopWorker {
    private static final int ELEMENTS = 16 << 20;
    /** Where the watcher looks: every 64 KiB, finer than a data-plane frame, so the first chunk reduced shows. */
    private static final int STRIDE = 16 << 10;

    private AllreduceLoopWorker() {
    }

    public static void main(String[] args) throws Exception {
        StdinWatch.exitWhenClosed();
        try (Kolo kolo = Kolo.init()) {
            Tensor t = Tensor.allocate(DType.FLOAT32, ELEMENTS);
            FloatBuffer values = t.data().duplicate().order(ByteOrder.LITTLE_ENDIAN).asFloatBuffer();
            int rank = kolo.rank();
            long[] current = {-1}; // the iteration whose op runs, -1 between ops
            Thread watcher = new Thread(() -> watch(values, current, rank), "inflight-watcher");
            watcher.setDaemon(true);
            watcher.start();
            System.out.println("loop rank=" + rank + " pid=" + ProcessHandle.current().pid());
            for (long i = 0; ; i++) {
                for (int e = 0; e < ELEMENTS; e++) {
                    values.put(e, 1f);
                }
                synchronized (current) {
                    current[0] = i;
                }
                try {
                    kolo.allreduceInPlace("grad", t, ReduceOp.SUM);
                } catch (WorkerLostException e) {
                    System.out.println("loop lost at=" + System.currentTimeMillis() + " rank=" + rank
                            + " iteration=" + i + " type=" + e.getClass().getSimpleName() + " lostRank="
                            + e.lostRank() + " message=" + e.getMessage());
                    reportNamed(kolo);
                    System.exit(3);
                }
                synchronized (current) {
                    current[0] = -1;
                }
                System.out.println("loop iteration=" + i + " rank=" + rank);
            }
        }
    }

    /**
     * The op in flight may fail naming a neighbour that aborted first; ops submitted once membership has seen the
     * loss fail at once naming the lost rank (docs/dev/design/failure-model.md). Prints the first such failure as
     * {@code loop named}, or the last one seen when membership has not spoken within 10 s.
     */
    static void reportNamed(Kolo kolo) {
        long deadline = System.nanoTime() + 10_000_000_000L;
        WorkerLostException last = null;
        while (System.nanoTime() < deadline) {
            try {
                kolo.barrier();
                System.out.println("loop named none: a barrier succeeded after the loss");
                return;
            } catch (WorkerLostException e) {
                last = e;
                if (e.getMessage().contains("left the cluster")) {
                    break;
                }
            }
            LockSupport.parkNanos(10_000_000); // poll interval; the deadline above bounds the wait
        }
        System.out.println("loop named lostRank=" + last.lostRank() + " message=" + last.getMessage());
    }

    private static void watch(FloatBuffer values, long[] current, int rank) {
        long reported = -1;
        while (true) {
            long i;
            synchronized (current) {
                i = current[0];
            }
            if (i >= 0 && i != reported) {
                for (int e = 0; e < ELEMENTS; e += STRIDE) {
                    if (values.get(e) == 2f) {
                        reported = i;
                        System.out.println("loop inflight iteration=" + i + " rank=" + rank);
                        break;
                    }
                }
            }
            // A poll interval, not a wait for a condition: the sign is looked for again 10 000 times a second.
            LockSupport.parkNanos(100_000);
        }
    }
}
