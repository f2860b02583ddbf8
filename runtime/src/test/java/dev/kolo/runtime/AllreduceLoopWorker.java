package dev.kolo.runtime;

import dev.kolo.testing.StdinWatch;

/**
 * A worker process for failure tests: allreduces 64 MiB in a loop until a peer is lost, then prints how
 * the loss surfaced and exits with status 3. Ends itself when its standard input closes.
 */
public final class AllreduceLoopWorker {
    private AllreduceLoopWorker() {
    }

    public static void main(String[] args) throws Exception {
        StdinWatch.exitWhenClosed();
        try (Kolo kolo = Kolo.init()) {
            Tensor t = Tensor.allocate(DType.FLOAT32, 16 << 20);
            System.out.println("loop rank=" + kolo.rank() + " pid=" + ProcessHandle.current().pid());
            for (long i = 0; ; i++) {
                try {
                    kolo.allreduceInPlace("grad", t, ReduceOp.SUM);
                } catch (WorkerLostException e) {
                    System.out.println("loop lost at=" + System.currentTimeMillis() + " rank=" + kolo.rank()
                            + " message=" + e.getMessage());
                    System.exit(3);
                }
                System.out.println("loop iteration=" + i + " rank=" + kolo.rank());
            }
        }
    }
}
