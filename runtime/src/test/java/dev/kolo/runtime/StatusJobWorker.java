package dev.kolo.runtime;

import dev.kolo.testing.StdinWatch;

/**
 * A worker process for the status page's tests: trains a pretend model, one allreduce per step, and reports its
 * steps (32 samples each) and a loss that falls. The worker whose {@code SW_EXTRA_MS} is set works that much
 * longer per step: the straggler the page must show. Prints {@code sw ready rank=R page=URL job=URL}.
 */
public final class StatusJobWorker {
    private StatusJobWorker() {
    }

    public static void main(String[] args) throws Exception {
        StdinWatch.exitWhenClosed();
        long extraMillis = Long.parseLong(System.getenv().getOrDefault("SW_EXTRA_MS", "0"));
        try (Kolo kolo = Kolo.init()) {
            System.out.println("sw ready rank=" + kolo.rank() + " page=" + kolo.statusUrl() + " job="
                    + kolo.jobStatusUrl());
            float[] gradient = new float[1 << 14];
            for (long step = 1; ; step++) {
                Thread.sleep(40 + extraMillis); // the forward and backward pass
                kolo.allreduce("grad", Tensor.of(gradient, gradient.length), ReduceOp.AVERAGE);
                kolo.reportStep(step, 32);
                kolo.reportScalar("loss", 2.0 / (1 + step * 0.02));
            }
        }
    }
}
