package dev.kolo.samples.mnist;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import dev.kolo.runtime.train.DistributedOptimizer;
import dev.kolo.runtime.train.LearningRateSchedule;
import dev.kolo.runtime.train.Sgd;
import java.io.PrintStream;
import java.util.Locale;

/**
 * Data-parallel training of an {@link Mlp} on Fashion-MNIST: the pattern to copy into a JVM training loop.
 *
 * <ol>
 *   <li>every rank builds the same model; rank 0's initial parameters are broadcast to all;</li>
 *   <li>each epoch every rank trains on its own shard of a permutation all ranks share;</li>
 *   <li>the backward pass hands each layer's gradient to the {@link DistributedOptimizer} as soon as it is
 *       complete, which averages it over the ranks while the earlier layers are differentiated;</li>
 *   <li>the learning rate is scaled with the global batch and warmed up ({@link LearningRateSchedule});</li>
 *   <li>after each epoch the ranks evaluate their shares of the test set and sum the counts.</li>
 * </ol>
 *
 * <p>Elastic seam: everything that depends on the number of workers is derived from {@code kolo.size()} in
 * {@link #plan(int)} (shards, steps per epoch, the scaled rate). An elastic job that survives a resize
 * restores its last commit ({@link TrainingCheckpoints}), calls {@code plan} with the new size, which
 * rescales the learning rate, and continues from the committed step. The elastic module is not built yet,
 * so nothing calls it after a resize today.
 *
 * <p>Only rank 0 prints progress; every rank returns the same {@link TrainResult}.
 */
final class Trainer {
    private final Kolo kolo;
    private final ImageSet train;
    private final ImageSet test;
    private final TrainSettings s;
    private final PrintStream out;
    private final TrainingCheckpoints checkpoints;
    private final TrainingMetrics metrics;

    /** Shards, steps per epoch and learning rate for a given number of workers. */
    record Plan(ShardSampler sampler, long stepsPerEpoch, LearningRateSchedule schedule) {
    }

    /** @param checkpoints where to commit and resume, or null */
    Trainer(Kolo kolo, FashionMnist data, TrainSettings settings, PrintStream out, TrainingCheckpoints checkpoints) {
        this.kolo = kolo;
        this.train = settings.trainLimit() > 0 ? data.train().head(settings.trainLimit()) : data.train();
        this.test = settings.testLimit() > 0 ? data.test().head(settings.testLimit()) : data.test();
        this.s = settings;
        this.out = out;
        this.checkpoints = checkpoints;
        this.metrics = TrainingMetrics.of(kolo.meterRegistry());
    }

    Plan plan(int size) {
        ShardSampler sampler = new ShardSampler(train.count(), kolo.rank(), size, s.seed());
        long perStep = (long) s.batchSize() * s.backwardPassesPerStep();
        long stepsPerEpoch = sampler.shardSize() / perStep;
        if (stepsPerEpoch < 1) {
            throw new IllegalArgumentException(train.count() + " training examples over " + size + " ranks leave "
                    + sampler.shardSize() + " per rank, fewer than one step of " + perStep
                    + " (--batch-size x --backward-passes-per-step)");
        }
        LearningRateSchedule schedule = LearningRateSchedule.builder(s.lr())
                .scaling(s.lrScaling(), (double) size * s.backwardPassesPerStep())
                .warmupEpochs(s.warmupFor(size))
                .stepsPerEpoch(stepsPerEpoch)
                .cosineDecay(s.cosineDecay() ? s.epochs() : 0)
                .build();
        return new Plan(sampler, stepsPerEpoch, schedule);
    }

    TrainResult run() {
        int rank = kolo.rank();
        int size = kolo.size();
        int batch = s.batchSize();
        int passes = s.backwardPassesPerStep();
        Mlp model = new Mlp(s.layerSizes(train.pixels(), 10), batch, s.seed());
        Sgd sgd = new Sgd(s.momentum(), s.weightDecay());
        DistributedOptimizer optimizer = DistributedOptimizer.builder(kolo, model.parameters())
                .updateRule(sgd).compression(s.compression()).backwardPassesPerStep(passes).build();
        Plan plan = plan(size);
        long step = checkpoints == null ? 0 : checkpoints.resume(model, sgd);
        optimizer.broadcastParameters(0);
        if (rank == 0) {
            out.printf(Locale.ROOT, "train: %d examples, %d per rank; batch %d x %d ranks x %d passes = %d global; "
                            + "%d steps/epoch; %s; compression %s; model %s%n", train.count(),
                    plan.sampler().shardSize(), batch, size, passes, (long) batch * size * passes, plan.stepsPerEpoch(),
                    plan.schedule(), s.compression().name().toLowerCase(Locale.ROOT),
                    java.util.Arrays.toString(s.layerSizes(train.pixels(), 10)));
            if (step > 0) {
                out.printf(Locale.ROOT, "train: resumed from the checkpoint of step %d%n", step);
            }
        }
        float[] x = new float[batch * train.pixels()];
        int[] y = new int[batch];
        long totalSteps = plan.stepsPerEpoch() * s.epochs();
        if (s.maxSteps() > 0) {
            totalSteps = Math.min(totalSteps, s.maxSteps());
        }
        double firstLoss = Double.NaN;
        double lastLoss = Double.NaN;
        double accuracy = Double.NaN;
        double intervalLoss = 0;
        int intervalPasses = 0;
        long started = System.nanoTime();
        long intervalStart = started;
        long intervalSteps = 0;
        int epoch = (int) (step / plan.stepsPerEpoch());
        while (step < totalSteps) {
            ShardSampler sampler = plan.sampler();
            sampler.shuffle(epoch);
            long epochEnd = Math.min(totalSteps, (epoch + 1) * plan.stepsPerEpoch());
            for (; step < epochEnd; step++) {
                long inEpoch = step - epoch * plan.stepsPerEpoch();
                double lr = plan.schedule().rate(step);
                for (int pass = 0; pass < passes; pass++) {
                    int from = sampler.offset() + (int) ((inEpoch * passes + pass) * batch);
                    train.fill(sampler.order(), from, batch, x, y);
                    intervalLoss += model.forward(x, y, batch);
                    intervalPasses++;
                    model.backward(optimizer::gradientReady);
                    optimizer.step(lr);
                }
                intervalSteps++;
                if ((inEpoch + 1) % s.logEvery() == 0 || step + 1 == epochEnd) {
                    double loss = average(intervalLoss / intervalPasses);
                    firstLoss = Double.isNaN(firstLoss) ? loss : firstLoss;
                    lastLoss = loss;
                    double seconds = (System.nanoTime() - intervalStart) / 1e9;
                    metrics.interval(step + 1, epoch + 1, loss, intervalSteps, intervalSteps * batch * passes * size,
                            seconds, lr);
                    if (rank == 0) {
                        out.printf(Locale.ROOT, "epoch %d step %d/%d samples/s %.0f loss %.4f lr %.4f%n", epoch + 1,
                                inEpoch + 1, plan.stepsPerEpoch(),
                                intervalSteps * batch * passes * size / Math.max(seconds, 1e-9), loss, lr);
                    }
                    intervalLoss = 0;
                    intervalPasses = 0;
                    intervalSteps = 0;
                    intervalStart = System.nanoTime();
                }
                if (checkpoints != null && (step + 1) % s.checkpointEvery() == 0) {
                    checkpoints.commit(step + 1, epoch, model, sgd);
                }
            }
            double[] eval = evaluate(model, x, y);
            accuracy = eval[0];
            metrics.evaluated(accuracy);
            if (rank == 0) {
                out.printf(Locale.ROOT, "epoch %d done: test_accuracy=%.4f test_loss=%.4f elapsed=%.1fs%n", epoch + 1,
                        eval[0], eval[1], (System.nanoTime() - started) / 1e9);
            }
            intervalStart = System.nanoTime();
            epoch++;
        }
        if (checkpoints != null) {
            checkpoints.awaitSaves();
        }
        if (Double.isNaN(accuracy)) {
            accuracy = evaluate(model, x, y)[0]; // resumed after the last step: nothing was trained
        }
        long checksum = agreedChecksum(model);
        return new TrainResult(epoch, step, firstLoss, lastLoss, accuracy, checksum);
    }

    /** Each rank evaluates its block of the test set; the counts are summed. Returns {accuracy, mean loss}. */
    private double[] evaluate(Mlp model, float[] x, int[] y) {
        int rank = kolo.rank();
        int size = kolo.size();
        int from = (int) ((long) test.count() * rank / size);
        int to = (int) ((long) test.count() * (rank + 1) / size);
        int[] order = new int[test.count()];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        double correct = 0;
        double lossSum = 0;
        for (int i = from; i < to; i += model.maxBatch()) {
            int n = Math.min(model.maxBatch(), to - i);
            test.fill(order, i, n, x, y);
            lossSum += model.forward(x, y, n) * n;
            correct += model.correct();
        }
        double[] sums = kolo.allreduce("eval", Tensor.of(new double[] {correct, lossSum}, 2), ReduceOp.SUM)
                .toDoubleArray();
        return new double[] {sums[0] / test.count(), sums[1] / test.count()};
    }

    private double average(double value) {
        return kolo.allreduce("train.loss", Tensor.of(new double[] {value}, 1), ReduceOp.AVERAGE).toDoubleArray()[0];
    }

    /** The checksum of the final parameters, checked to be identical on every rank. */
    private long agreedChecksum(Mlp model) {
        long mine = ParameterChecksum.of(model.parameters());
        long[] all = kolo.allgather("checksum", Tensor.of(new long[] {mine}, 1)).toLongArray();
        for (int r = 0; r < all.length; r++) {
            if (all[r] != mine) {
                throw new KoloException("final parameters differ between ranks: rank " + kolo.rank() + " has "
                        + ParameterChecksum.hex(mine) + ", rank " + r + " has " + ParameterChecksum.hex(all[r]));
            }
        }
        return mine;
    }
}
