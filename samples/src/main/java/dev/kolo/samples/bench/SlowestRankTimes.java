package dev.kolo.samples.bench;

import dev.kolo.runtime.Collectives;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import java.util.Arrays;

/**
 * Times of {@code bench allreduce} as its slowest rank saw them: every rank times its own ops, and an allreduce of
 * MAX makes the slowest one's time the result on all, so that every rank decides (how many ops, when to stop
 * warming up) alike. Shared by the per-size timing and the fused step.
 */
final class SlowestRankTimes {
    private SlowestRankTimes() {
    }

    /** @return the largest of every rank's {@code seconds} (an allreduce named {@code name} over {@code group}) */
    static double slowestRank(Collectives group, String name, double seconds) {
        return group.allreduce(name, Tensor.of(new double[] {seconds}, 1), ReduceOp.MAX).toDoubleArray()[0];
    }

    /** {@code iterations} ops, each timed alone after a barrier; @return the median of the slowest rank's times */
    static double medianOfSlowest(Collectives group, String name, Runnable op, int iterations) {
        return mediansOfSlowest(group, name, new Runnable[] {op}, iterations)[0];
    }

    /**
     * {@code rounds} rounds of {@code ops} in turn (the first, the second, ..., then the first again), each op timed
     * alone after a barrier, so that a drift of the machine touches every op alike.
     *
     * @return per op, the median of the slowest rank's times
     */
    static double[] mediansOfSlowest(Collectives group, String name, Runnable[] ops, int rounds) {
        int k = ops.length;
        double[] times = new double[k * rounds];
        for (int i = 0; i < times.length; i++) {
            group.barrier();
            long start = System.nanoTime();
            ops[i % k].run();
            times[i] = (System.nanoTime() - start) / 1e9;
        }
        double[] worst = group.allreduce(name, Tensor.of(times, times.length), ReduceOp.MAX).toDoubleArray();
        double[] medians = new double[k];
        double[] ofOne = new double[rounds];
        for (int j = 0; j < k; j++) {
            for (int r = 0; r < rounds; r++) {
                ofOne[r] = worst[r * k + j];
            }
            Arrays.sort(ofOne);
            medians[j] = ofOne[rounds / 2];
        }
        return medians;
    }
}
