package dev.kolo.samples.bench.model;

import dev.kolo.samples.bench.ResNet50Shapes;
import java.util.ArrayList;
import java.util.List;

/**
 * A cached ResNet-50-shaped step as the runtime runs it once every gradient is ready: one agreement round (161
 * cached ids; the first small gradients in id order, the backward order, ride in it as eager data while its
 * budget lasts) and then the other gradients fused, in id order, into buffers of at most the fusion threshold
 * (a gradient that does not fit the open buffer starts the next, as {@code FusionPlan} does), each allreduced
 * by the algorithm the runtime picks for its size (a batch of several tensors as their own buffers, which takes
 * Rabenseifner or the ring only). Why: the step at 64 to 1024 ranks is the number the
 * scaling question asks for, and it is this sum.
 */
final class ResNet50Step {
    final int n;
    final int tensors;
    final long totalBytes;
    final long eagerBytes;
    final List<Long> batches;
    /** Tensors in each batch: a batch of several is taken as their own buffers (not contiguous). */
    final List<Integer> batchTensors;

    private ResNet50Step(int n, int tensors, long totalBytes, long eagerBytes, List<Long> batches,
                         List<Integer> batchTensors) {
        this.n = n;
        this.tensors = tensors;
        this.totalBytes = totalBytes;
        this.eagerBytes = eagerBytes;
        this.batches = batches;
        this.batchTensors = batchTensors;
    }

    /** The step's gradients (float32, backward order) on {@code n} ranks, fused at {@code fusionThreshold} bytes. */
    static ResNet50Step of(int n, long fusionThreshold) {
        List<Long> sizes = new ArrayList<>();
        for (long[] shape : ResNet50Shapes.backwardOrder()) {
            sizes.add(4 * ResNet50Shapes.elements(shape));
        }
        return of(n, fusionThreshold, sizes);
    }

    static ResNet50Step of(int n, long fusionThreshold, List<Long> sizes) {
        long total = 0;
        long eager = 0;
        long budget = n > 1 ? CostModel.eagerBudget(n) : 0;
        List<Long> batches = new ArrayList<>();
        List<Integer> counts = new ArrayList<>();
        long open = -1;
        int members = 0;
        for (long bytes : sizes) {
            total += bytes;
            if (n > 1 && bytes <= CostModel.eagerOpBytes(n) && bytes <= budget) {
                eager += bytes;
                budget -= bytes;
                continue;
            }
            if (fusionThreshold > 0 && open >= 0 && open + bytes <= fusionThreshold) {
                open += bytes;
                members++;
                continue;
            }
            if (open >= 0) {
                batches.add(open);
                counts.add(members);
            }
            open = bytes;
            members = 1;
        }
        if (open >= 0) {
            batches.add(open);
            counts.add(members);
        }
        return new ResNet50Step(n, sizes.size(), total, eager, List.copyOf(batches), List.copyOf(counts));
    }

    /** Counts of the step's agreement round. */
    CollectiveCost agreement(CostModel model) {
        return model.agreementRound(n, tensors, eagerBytes);
    }

    double agreementSeconds(CostModel model) {
        return model.agreementSeconds(n, tensors, eagerBytes);
    }

    /** The round, then every fused buffer's allreduce; the op overhead once for the round and once per buffer. */
    double seconds(CostModel model) {
        double t = agreementSeconds(model);
        for (int i = 0; i < batches.size(); i++) {
            t += model.allreduceSeconds(n, batches.get(i), batchTensors.get(i) == 1);
        }
        return t;
    }
}
