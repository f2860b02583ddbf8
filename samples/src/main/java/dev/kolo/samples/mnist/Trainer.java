package dev.kolo.samples.mnist;

import dev.kolo.elastic.Elastic;
import dev.kolo.elastic.ElasticJobFailedException;
import dev.kolo.elastic.ElasticState;
import dev.kolo.elastic.MembershipChangedException;
import dev.kolo.elastic.data.ElasticSampler;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import dev.kolo.runtime.train.DistributedOptimizer;
import dev.kolo.runtime.train.LearningRateSchedule;
import dev.kolo.runtime.train.UpdateRule;
import java.io.PrintStream;
import java.util.Iterator;
import java.util.Locale;

/**
 * Data-parallel training of a {@link SampleModel} (the {@link Mlp} or a {@link DjlModel}) on Fashion-MNIST: the
 * pattern to copy into a JVM training loop.
 *
 * <ol>
 *   <li>every rank builds the same model; {@link Elastic#run} starts every rank from the same bytes (rank 0's,
 *       or the newest checkpoint's);</li>
 *   <li>each step every rank trains on its own share of a permutation all ranks share ({@link ElasticSampler});</li>
 *   <li>the backward pass hands each layer's gradient to the {@link DistributedOptimizer} as soon as it is
 *       complete, which averages it over the ranks while the earlier layers are differentiated;</li>
 *   <li>the learning rate is scaled with the global batch and warmed up ({@link LearningRateSchedule});</li>
 *   <li>after each epoch the ranks evaluate their shares of the test set and sum the counts.</li>
 * </ol>
 *
 * <p>Elastic: the loop runs under {@link Elastic#run} with its position (the sampler's, and the step) in a
 * {@link TrainingState}, committed every {@code --commit-every} steps. Everything that depends on the number of
 * workers comes from {@link #plan(int)} (steps per epoch, the scaled rate) and the sampler, asked again each time
 * the loop is entered:
 * after a lost worker (the survivors roll back to the last commit) or a membership change at a commit (no
 * rollback), the loop continues from the committed step with the new size. In a fixed job a lost worker
 * stops every rank instead, and a restart resumes from the newest checkpoint.
 *
 * <p>Every rank prints {@code kolo: step=S epoch=E size=N gen=G checksum=HEX} at each commit and
 * {@code kolo: reset reason=R size=N gen=G ...} after each reset; rank 0 prints the rest. Every rank
 * returns the same {@link TrainResult}.
 */
final class Trainer {
    private final Kolo kolo;
    private final ImageSet train;
    private final ImageSet test;
    private final TrainSettings s;
    private final PrintStream out;
    private final SampleModel model;
    private final UpdateRule rule;
    /**
     * Each rank's share of every epoch: one step takes {@code batch x passes} examples per rank (the passes' batches
     * one after the other), the tail that cannot fill a step sits the epoch out.
     */
    private final ElasticSampler sampler;
    /** The samples every epoch visits, in all ranks' training sets together (each rank's own, partitioned). */
    private final long jobCount;
    private boolean entered;
    private final TrainingMetrics metrics;

    /** Largest evaluation batch of a model that takes more than the training batch (the CNN). */
    static final int EVAL_BATCH = 256;

    /** Examples per step, steps per epoch and learning rate for a given number of workers. */
    record Plan(long globalBatch, long stepsPerEpoch, LearningRateSchedule schedule) {
    }

    /**
     * @param partitioned whether {@code data}'s training set is this rank's partition (each rank holds its own, of
     *                    about equal sizes: the ranks train on as many as the smallest holds) rather than the whole
     *                    set every rank holds; the test set is always the whole
     */
    Trainer(Kolo kolo, FashionMnist data, TrainSettings settings, PrintStream out, boolean partitioned) {
        this.kolo = kolo;
        ImageSet own = settings.trainLimit() > 0 ? data.train().head(settings.trainLimit()) : data.train();
        this.train = partitioned ? own.head(smallestPartition(kolo, own.count())) : own;
        this.jobCount = partitioned ? (long) train.count() * kolo.size() : train.count();
        this.test = settings.testLimit() > 0 ? data.test().head(settings.testLimit()) : data.test();
        this.s = settings;
        this.out = out;
        this.model = !s.model().equals(TrainSettings.MLP)
                ? new DjlModel(kolo, s.model(), Math.max(s.batchSize(), EVAL_BATCH), s.seed(), s.intraOpThreads())
                : new Mlp(s.layerSizes(train.pixels(), 10), 2 * s.batchSize(), s.seed()); // room for a rebalance
        this.rule = s.updateRule();
        this.sampler = ElasticSampler.builder(kolo).batchSize(s.batchSize() * s.backwardPassesPerStep())
                .maxBatchSize(model.maxBatch() * s.backwardPassesPerStep())
                .seed(s.seed()).dropLast(true).partitioned(partitioned).build();
        this.metrics = TrainingMetrics.of(kolo.meterRegistry());
    }

    private static int smallestPartition(Kolo kolo, int own) {
        return (int) kolo.allreduce("train.partition", Tensor.of(new long[] {own}, 1), ReduceOp.MIN)
                .toLongArray()[0];
    }

    SampleModel model() {
        return model;
    }

    UpdateRule rule() {
        return rule;
    }

    ElasticSampler sampler() {
        return sampler;
    }

    /** @return the plan for {@code size} workers, for this worker's current rank */
    Plan plan(int size) {
        long globalBatch = (long) s.batchSize() * s.backwardPassesPerStep() * size;
        long stepsPerEpoch = jobCount / globalBatch;
        if (stepsPerEpoch < 1) {
            throw new IllegalArgumentException(jobCount + " training examples over " + size + " ranks leave "
                    + jobCount / size + " per rank, fewer than one step of " + s.batchSize()
                    * s.backwardPassesPerStep() + " (--batch-size x --backward-passes-per-step)");
        }
        LearningRateSchedule schedule = LearningRateSchedule.builder(s.lr())
                .scaling(s.lrScaling(), (double) size * s.backwardPassesPerStep())
                .warmupEpochs(s.warmupFor(size))
                .stepsPerEpoch(stepsPerEpoch)
                .cosineDecay(s.cosineDecay() ? s.epochs() : 0)
                .build();
        return new Plan(globalBatch, stepsPerEpoch, schedule);
    }

    /**
     * Trains to the end (or {@code --max-steps}) under {@link Elastic#run}.
     *
     * @throws dev.kolo.elastic.ElasticJobFailedException if the job cannot go on (a lost worker in a fixed job)
     * @throws dev.kolo.elastic.WorkerLeftException on a worker that left at a commit as it asked
     */
    TrainResult run(TrainingState state) {
        ElasticState st = state.elastic();
        st.onReset(e -> out.printf(Locale.ROOT, "kolo: reset reason=%s size=%d gen=%d previous_size=%d rank=%d step=%d%n",
                e.reason().name().toLowerCase(Locale.ROOT), e.size(), e.generation(), e.previousSize(), e.rank(),
                st.longValue(TrainingState.STEP)));
        TrainResult result;
        try {
            result = Elastic.run(kolo, st, this::train);
        } catch (ElasticJobFailedException e) {
            if (e.stopped()) {
                out.printf(Locale.ROOT, "kolo: stopped at step=%d%n", st.longValue(TrainingState.STEP));
            }
            throw e;
        }
        st.finishCheckpoints(); // the last due checkpoint even if a save was still running when it came
        return result;
    }

    /** The loop; entered again after each reset, from the position the state holds. */
    private TrainResult train(ElasticState st) {
        int rank = kolo.rank();
        int size = kolo.size();
        long gen = kolo.generation();
        // Op names carry the generation, like the elastic module's own: each generation's tensors stay apart
        // in the timeline and in stall reports.
        String tag = "g" + gen + ".";
        int batch = s.batchSize();
        int passes = s.backwardPassesPerStep();
        long step = st.longValue(TrainingState.STEP);
        long epoch = sampler.epoch();
        long position = sampler.samplesTaken();
        Plan plan = plan(size);
        DistributedOptimizer optimizer = DistributedOptimizer.builder(kolo, model.parameters()).updateRule(rule)
                .compression(s.compression()).reduceOp(s.reduceOp()).backwardPassesPerStep(passes)
                .namePrefix(tag + "grad.").build();
        if (rank == 0) {
            if (!entered) {
                out.printf(Locale.ROOT, "train: %d examples, %d per rank; batch %d x %d ranks x %d passes = %d global; "
                                + "%d steps/epoch; %s; compression %s; gradients %s; model %s; commit every %d steps%s%n",
                        jobCount, jobCount / size, batch, size, passes, plan.globalBatch(),
                        plan.stepsPerEpoch(), plan.schedule(), s.compression().name().toLowerCase(Locale.ROOT),
                        s.reduceOp().name().toLowerCase(Locale.ROOT),
                        model.describe(), s.commitEvery(),
                        s.checkpointDir() == null ? "" : ", checkpoint every " + s.checkpointEveryCommits()
                                * s.commitEvery() + " steps to " + s.checkpointDir());
                if (step > 0) {
                    out.printf(Locale.ROOT, "train: resuming at step %d (epoch %d, %d examples into it)%n", step,
                            epoch + 1, position);
                }
            } else {
                out.printf(Locale.ROOT, "train: re-planned for %d workers at step %d (epoch %d): %d steps/epoch; %s%n",
                        size, step, epoch + 1, plan.stepsPerEpoch(), plan.schedule());
            }
        }
        entered = true;
        int count = (int) jobCount;
        float[] x = new float[model.maxBatch() * train.pixels()];
        int[] y = new int[model.maxBatch()];
        Iterator<int[]> batches = sampler.batches(count);
        double firstLoss = Double.NaN;
        double lastLoss = Double.NaN;
        double accuracy = Double.NaN;
        double intervalLoss = 0;
        int intervalPasses = 0;
        long intervalSteps = 0;
        long started = System.nanoTime();
        long intervalStart = started;
        while (epoch < s.epochs()) {
            boolean epochOver = !batches.hasNext();
            boolean stepsOver = s.maxSteps() > 0 && step >= s.maxSteps();
            if (epochOver || stepsOver) {
                if (epochOver || position > 0) {
                    double[] eval = evaluate(tag, x, y);
                    accuracy = eval[0];
                    metrics.evaluated(accuracy);
                    kolo.reportScalar("test_accuracy", accuracy);
                    if (rank == 0) {
                        out.printf(Locale.ROOT, "epoch %d done: test_accuracy=%.4f test_loss=%.4f elapsed=%.1fs%n",
                                epoch + 1, eval[0], eval[1], (System.nanoTime() - started) / 1e9);
                    }
                }
                if (!epochOver) {
                    break;
                }
                epoch = sampler.epoch(); // the last step of the epoch moved the sampler to the next one
                position = 0;
                if (stepsOver) {
                    break;
                }
                batches = sampler.batches(count);
                intervalStart = System.nanoTime();
                continue;
            }
            // The rate follows the epoch, not the step count, so it stays continuous when the size changes.
            double lr = plan.schedule().rateAtEpoch(epoch + (double) position / count);
            // This rank's examples of the step, the passes' batches in turn. A straggler policy may give the ranks
            // unequal shares: each rank's gradient is then weighed by its share, so the update stays the global
            // batch's mean gradient.
            int[] share = batches.next();
            if (share.length < passes) {
                throw new IllegalStateException("rank " + rank + "'s share of the step is " + share.length
                        + " examples, fewer than the " + passes + " backward passes: a rebalance gave it too few; "
                        + "use --backward-passes-per-step 1 with KOLO_STRAGGLER=rebalance");
            }
            if (s.reduceOp() != ReduceOp.ADASUM) {
                optimizer.setGradientWeight(sampler.gradientWeight());
            }
            for (int pass = 0; pass < passes; pass++) {
                int from = share.length * pass / passes;
                int n = share.length * (pass + 1) / passes - from;
                train.fill(share, from, n, x, y);
                long computeStart = System.nanoTime();
                intervalLoss += model.forward(x, y, n);
                intervalPasses++;
                model.backward(optimizer::gradientReady);
                if (rank == s.slowRank()) {
                    straggle((long) ((System.nanoTime() - computeStart) * (s.slowdown() - 1)));
                }
                boolean last = pass == passes - 1;
                if (last) {
                    model.startStep();
                }
                boolean stepped = false;
                try {
                    optimizer.step(lr);
                    stepped = true;
                } finally {
                    if (last) {
                        model.endStep(!stepped);
                    }
                }
            }
            position += plan.globalBatch();
            sampler.stepped();
            step++;
            st.set(TrainingState.STEP, step);
            // A fixed job asked to stop (SIGTERM on any rank) stops at a step boundary, that step checkpointed.
            st.stepDone();
            kolo.reportStep(step, share.length); // the status page's step rate, images/s and step times
            intervalSteps++;
            if (step % s.logEvery() == 0 || count - position < plan.globalBatch()) {
                double loss = average(tag, intervalLoss / intervalPasses);
                firstLoss = Double.isNaN(firstLoss) ? loss : firstLoss;
                lastLoss = loss;
                kolo.reportScalar("loss", loss);
                kolo.reportScalar("lr", lr);
                double seconds = (System.nanoTime() - intervalStart) / 1e9;
                metrics.interval(step, epoch + 1, loss, intervalSteps, intervalSteps * plan.globalBatch(), seconds, lr);
                if (rank == 0) {
                    out.printf(Locale.ROOT, "epoch %d step %d/%d samples/s %.0f loss %.4f lr %.4f%n", epoch + 1,
                            position / plan.globalBatch(), plan.stepsPerEpoch(),
                            intervalSteps * plan.globalBatch() / Math.max(seconds, 1e-9), loss, lr);
                }
                intervalLoss = 0;
                intervalPasses = 0;
                intervalSteps = 0;
                intervalStart = System.nanoTime();
            }
            if (step % s.commitEvery() == 0) {
                commit(st, step, epoch, size, gen);
            }
        }
        if (Double.isNaN(accuracy)) {
            accuracy = evaluate(tag, x, y)[0]; // entered at the end (resumed or reset there): nothing was trained
        }
        long checksum = agreedChecksum(tag);
        int epochs = (int) Math.min(s.epochs(), epoch + (position > 0 ? 1 : 0));
        return new TrainResult(epochs, step, firstLoss, lastLoss, accuracy, checksum);
    }

    /** The straggler's extra time: a pause, so that it slows this rank alone and not the others on its cores. */
    private static void straggle(long nanos) {
        long end = System.nanoTime() + nanos;
        for (long left = nanos; left > 0; left = end - System.nanoTime()) {
            java.util.concurrent.locks.LockSupport.parkNanos(left);
        }
    }

    /** Commits the state and prints the progress line; a membership change at this commit passes through. */
    private void commit(ElasticState st, long step, long epoch, int size, long gen) {
        try {
            st.commit();
        } catch (MembershipChangedException e) {
            progress(step, epoch, size, gen); // the state was committed: the others continue from here
            throw e;
        }
        progress(step, epoch, size, gen);
    }

    private void progress(long step, long epoch, int size, long gen) {
        out.printf(Locale.ROOT, "kolo: step=%d epoch=%d size=%d gen=%d checksum=%s%n", step, epoch + 1, size, gen,
                ParameterChecksum.hex(ParameterChecksum.of(model)));
    }

    /** Each rank evaluates its block of the test set; the counts are summed. Returns {accuracy, mean loss}. */
    private double[] evaluate(String tag, float[] x, int[] y) {
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
            lossSum += model.evaluate(x, y, n) * n;
            correct += model.correct();
        }
        double[] sums = kolo.allreduce(tag + "eval", Tensor.of(new double[] {correct, lossSum}, 2), ReduceOp.SUM)
                .toDoubleArray();
        return new double[] {sums[0] / test.count(), sums[1] / test.count()};
    }

    private double average(String tag, double value) {
        return kolo.allreduce(tag + "train.loss", Tensor.of(new double[] {value}, 1), ReduceOp.AVERAGE)
                .toDoubleArray()[0];
    }

    /** The checksum of the final parameters, checked to be identical on every rank. */
    private long agreedChecksum(String tag) {
        long mine = ParameterChecksum.of(model);
        long[] all = kolo.allgather(tag + "checksum", Tensor.of(new long[] {mine}, 1)).toLongArray();
        for (int r = 0; r < all.length; r++) {
            if (all[r] != mine) {
                throw new KoloException("final parameters differ between ranks: rank " + kolo.rank() + " has "
                        + ParameterChecksum.hex(mine) + ", rank " + r + " has " + ParameterChecksum.hex(all[r]));
            }
        }
        return mine;
    }
}
