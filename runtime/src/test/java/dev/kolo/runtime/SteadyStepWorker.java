package dev.kolo.runtime;

import dev.kolo.testing.StdinWatch;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * A worker process for failure tests: runs training-like steps (40 named tensors each, small and medium,
 * submitted asynchronously; from the second step on the ranks agree on them in their own rounds) until a peer
 * is lost, then prints how the loss surfaced and exits with status 3. Ends itself when its standard input closes.
 */
public final class SteadyStepWorker {
    private SteadyStepWorker() {
    }

    public static void main(String[] args) throws Exception {
        StdinWatch.exitWhenClosed();
        try (Kolo kolo = Kolo.init()) {
            List<Tensor> grads = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                grads.add(Tensor.allocate(DType.FLOAT32, i % 4 == 0 ? 64 << 10 : 1 + i));
            }
            for (long step = 0; ; step++) {
                List<CompletableFuture<Tensor>> pending = new ArrayList<>();
                try {
                    for (int i = 0; i < grads.size(); i++) {
                        pending.add(kolo.allreduceInPlaceAsync("grad." + i, grads.get(i), ReduceOp.AVERAGE, 1, 1));
                    }
                    for (CompletableFuture<Tensor> f : pending) {
                        f.join();
                    }
                } catch (CompletionException | WorkerLostException e) {
                    Throwable cause = e instanceof CompletionException ? e.getCause() : e;
                    System.out.println("loop lost at=" + System.currentTimeMillis() + " rank=" + kolo.rank()
                            + " iteration=" + step + " type=" + cause.getClass().getSimpleName() + " lostRank="
                            + (cause instanceof WorkerLostException w ? w.lostRank() : -2)
                            + " message=" + cause.getMessage());
                    AllreduceLoopWorker.reportNamed(kolo);
                    System.exit(3);
                }
                System.out.println("loop iteration=" + step + " rank=" + kolo.rank());
            }
        }
    }
}
