package dev.kolo.runtime.train;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.KoloInterruptedException;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * Averages gradients over all ranks of a job (or sums them, or combines them by Adasum:
 * {@link Builder#reduceOp}) and applies them, like Horovod's {@code DistributedOptimizer}.
 *
 * <p>Per backward pass: call {@link #gradientReady(Parameter)} for each parameter as soon as the backward
 * pass has written its gradient (last layer first); on the last pass of a step this starts an asynchronous
 * in-place allreduce (AVERAGE) of that gradient, so the exchange of the later layers overlaps the backward
 * pass of the earlier ones, and the runtime fuses small gradients into one ring operation. Then call
 * {@link #step(double)}: it waits for the averaged gradients and applies the {@link UpdateRule}.
 *
 * <p>With {@code backwardPassesPerStep = k > 1} the first k-1 calls of {@code step} only accumulate the
 * local gradients (no communication, no update); the k-th exchanges their mean and updates. The averaged
 * gradient is thus the mean over {@code size * k} micro-batches.
 *
 * <p>Ranks of unequal batches (mixed machines, or a sampler that moves work away from a slow rank) set each rank's
 * {@linkplain #setGradientWeight gradient weight} to its share of the global batch relative to an equal share,
 * {@code n_i * size / N}: the average is then {@code sum(n_i * g_i) / N}, the global batch's mean gradient, the
 * update one process would make on the whole batch.
 *
 * <p>Every rank must register the same parameters (names and shapes) and call {@code step} the same number
 * of times. One training thread per optimizer; a step allocates no gradient-sized memory.
 */
public final class DistributedOptimizer {
    private final Kolo kolo;
    private final List<GradientSlot> slots;
    private final Map<Parameter, Integer> indexOf = new IdentityHashMap<>();
    private final List<CompletableFuture<Tensor>> pending;
    private final boolean[] submitted;
    /** The slots in the order their exchange started this step: the order their results arrive in. */
    private final int[] exchangeOrder;
    private int exchanged;
    private final UpdateRule rule;
    private final Compression compression;
    private final int passesPerStep;
    private final ReduceOp reduceOp;
    private double gradientWeight;
    private int passInStep;
    private long passes;
    private long steps;

    private DistributedOptimizer(Builder b) {
        this.kolo = b.kolo;
        this.rule = b.rule;
        this.compression = b.compression;
        this.passesPerStep = b.passesPerStep;
        this.reduceOp = b.reduceOp;
        this.gradientWeight = b.gradientWeight;
        List<GradientSlot> s = new ArrayList<>(b.parameters.size());
        for (Parameter p : b.parameters) {
            GradientSlot slot = new GradientSlot(p, b.prefix + p.name(), compression);
            indexOf.put(p, s.size());
            s.add(slot);
        }
        this.slots = Collections.unmodifiableList(s);
        this.pending = new ArrayList<>(Collections.nCopies(s.size(), null));
        this.submitted = new boolean[s.size()];
        this.exchangeOrder = new int[s.size()];
    }

    /**
     * @param parameters the model's parameters, each with a name unique within the model and equal on every
     *                   rank; their order is the order of {@link #broadcastParameters}
     */
    public static Builder builder(Kolo kolo, List<Parameter> parameters) {
        return new Builder(kolo, parameters);
    }

    /**
     * Overwrites every parameter with rank {@code rootRank}'s values, so all ranks start from the same model
     * (call once after initialising or restoring the model, on every rank).
     */
    public void broadcastParameters(int rootRank) {
        List<CompletableFuture<Tensor>> results = new ArrayList<>(slots.size());
        int i = 0;
        try {
            for (GradientSlot s : slots) {
                results.add(kolo.broadcastAsync("param." + s.wireName, s.stageValues(), rootRank));
            }
            for (; i < slots.size(); i++) {
                Tensor t = await(results.get(i), "broadcast 'param." + slots.get(i).wireName + "'");
                t.buffer().asFloatBuffer().get(slots.get(i).parameter.values());
            }
        } catch (RuntimeException e) { // none of the others may read the staging buffers the next step fills
            for (int k = i + 1; k < results.size(); k++) {
                kolo.abandon(results.get(k));
            }
            throw e;
        }
    }

    /**
     * Tells the optimizer that {@code p.gradient()} now holds this backward pass's gradient. On the last pass
     * of a step the gradient is copied (compressed if asked) and its allreduce starts at once; the array may
     * be overwritten as soon as this returns. At most once per parameter per pass.
     *
     * @throws IllegalArgumentException if {@code p} was not registered or was already reported this pass
     */
    public void gradientReady(Parameter p) {
        Integer index = indexOf.get(p);
        if (index == null) {
            throw new IllegalArgumentException(p + " is not a parameter of this optimizer");
        }
        int i = index;
        GradientSlot slot = slots.get(i);
        if (submitted[i]) {
            throw new IllegalArgumentException(p + " was reported twice in one backward pass");
        }
        if (passInStep < passesPerStep - 1) {
            submitted[i] = true;
            slot.accumulate(passInStep == 0);
            return;
        }
        CompletableFuture<Tensor> leftover = pending.get(i);
        if (leftover != null) { // of a step that failed: its name is in flight until every rank has run it
            pending.set(i, null);
            settle(leftover, slot);
        }
        submitted[i] = true;
        Tensor wire = slot.pack(passesPerStep > 1, gradientWeight);
        // AVERAGE divides by the number of ranks; the prescale by the number of accumulated passes.
        pending.set(i, kolo.allreduceInPlaceAsync(slot.wireName, wire, reduceOp, 1.0 / passesPerStep, 1.0));
        exchangeOrder[exchanged++] = i;
    }

    /**
     * Ends a backward pass. On the last pass of a step, starts the exchange of any gradient not yet reported,
     * waits for all of them and leaves the average over ranks and passes in every {@code p.gradient()}.
     *
     * <p>A step that fails (an exchange fails, does not complete within {@code KOLO_OP_TIMEOUT}, or the thread is
     * interrupted) throws once none of its exchanges reads or writes the optimizer's buffers any more: the one
     * whose wait failed is let go of by that wait, the others are abandoned ({@link Kolo#abandon}). Parameters
     * whose average arrived before the failure were updated by {@link #step}, the others not, so the ranks may
     * hold different values afterwards: restore them (an elastic job rejoins and restores its last commit).
     * Exchanges that other ranks have not run yet stay in flight under their names (an op is never withdrawn);
     * the next step waits for each (within {@code KOLO_OP_TIMEOUT}, its result discarded) before it submits the
     * same name, so it starts clean.
     *
     * @return true if this pass completed a step (gradients were exchanged), false if it only accumulated
     * @throws KoloException if a collective fails (e.g. {@code WorkerLostException} when a rank dies) or does not
     *                      complete within {@code KOLO_OP_TIMEOUT} (the message names the gradient and the setting)
     */
    public boolean synchronize() {
        return finishPass(null, 0);
    }

    /**
     * {@link #synchronize()}, then, if a step completed, the update rule on every parameter. Each parameter is
     * updated as soon as its averaged gradient arrives, in the order the exchanges started, so the updates of
     * the first gradients overlap the exchange of the later ones. A failed step: see {@link #synchronize()}.
     *
     * @return true if the parameters were updated
     */
    public boolean step(double learningRate) {
        return finishPass(rule, learningRate);
    }

    private boolean finishPass(UpdateRule update, double learningRate) {
        boolean last = passInStep == passesPerStep - 1;
        try {
            for (int i = 0; i < slots.size(); i++) {
                if (!submitted[i]) {
                    gradientReady(slots.get(i).parameter);
                }
            }
        } catch (RuntimeException e) {
            failPass(0, last);
            throw e;
        }
        java.util.Arrays.fill(submitted, false);
        passes++;
        if (!last) {
            passInStep++;
            return false;
        }
        passInStep = 0;
        int count = exchanged;
        exchanged = 0;
        int k = 0;
        try {
            for (; k < count; k++) {
                int i = exchangeOrder[k];
                GradientSlot slot = slots.get(i);
                await(pending.get(i), "allreduce '" + slot.wireName + "'");
                pending.set(i, null);
                slot.unpack();
                if (update != null) {
                    update.apply(slot.parameter, learningRate);
                }
            }
        } catch (RuntimeException e) {
            exchanged = count;
            failPass(k + 1, true); // the failed exchange (k) was let go of by its own wait
            throw e;
        }
        steps++;
        return true;
    }

    /**
     * Ends a pass that failed: the step's exchanges from the {@code from}-th on are abandoned, so that no late result
     * lands in the buffers the next step fills; they stay in {@link #pending}, and the next step waits for each
     * before it submits its name again. The next pass starts a new step.
     */
    private void failPass(int from, boolean exchanging) {
        if (exchanging) {
            for (int k = from; k < exchanged; k++) {
                kolo.abandon(pending.get(exchangeOrder[k]));
            }
        }
        exchanged = 0;
        passInStep = 0;
        java.util.Arrays.fill(submitted, false);
    }

    /**
     * Waits for an exchange of a failed step, abandoned then, before its name is submitted again; its result (on a
     * copy) is discarded, and so is its failure: the new exchange reports its own.
     */
    private void settle(CompletableFuture<Tensor> leftover, GradientSlot slot) {
        try {
            await(leftover, "allreduce '" + slot.wireName + "' of the step that failed");
        } catch (KoloInterruptedException e) {
            pending.set(indexOf.get(slot.parameter), leftover); // still in flight: the next try waits again
            throw e;
        } catch (KoloException e) {
            // discarded with the step it belonged to
        }
    }

    /**
     * Weighs this rank's gradient in the exchanges that start from now on: with batches of unequal sizes, this
     * rank's share of the step's global batch relative to an equal share, {@code n_i * size / N} (an
     * {@code ElasticSampler}'s {@code gradientWeight()}), so that the average over the ranks is the global batch's
     * mean gradient. 1 (the default) for equal batches. Every rank sets its own; the weights of a step sum to the
     * number of ranks.
     *
     * @throws IllegalArgumentException if {@code weight} is negative or not finite, or is not 1 with
     *                                  {@link ReduceOp#ADASUM} (which combines by angles, not by counts)
     */
    public void setGradientWeight(double weight) {
        gradientWeight = Builder.checkedWeight(weight, reduceOp);
    }

    /** @return the weight of this rank's gradient ({@link #setGradientWeight}) */
    public double gradientWeight() {
        return gradientWeight;
    }

    /** @return backward passes completed so far */
    public long passes() {
        return passes;
    }

    /** @return optimizer steps (parameter updates) completed so far */
    public long steps() {
        return steps;
    }

    /** @return backward passes accumulated into each step */
    public int backwardPassesPerStep() {
        return passesPerStep;
    }

    /** @return how gradients travel */
    public Compression compression() {
        return compression;
    }

    /** How the ranks' gradients combine; see {@link Builder#reduceOp(ReduceOp)}. */
    public ReduceOp reduceOp() {
        return reduceOp;
    }

    /** @return the parameters, in registration order */
    public List<Parameter> parameters() {
        List<Parameter> ps = new ArrayList<>(slots.size());
        slots.forEach(s -> ps.add(s.parameter));
        return ps;
    }

    /** @return the update rule (e.g. to checkpoint its {@link UpdateRule#state state}) */
    public UpdateRule updateRule() {
        return rule;
    }

    /** Waits as Kolo's blocking collectives do: within KOLO_OP_TIMEOUT, driving the engine meanwhile. */
    private Tensor await(CompletableFuture<Tensor> f, String what) {
        return kolo.await(f, what);
    }

    /** Settings of a {@link DistributedOptimizer}. */
    public static final class Builder {
        private final Kolo kolo;
        private final List<Parameter> parameters;
        private UpdateRule rule = new Sgd(0, 0);
        private Compression compression = Compression.NONE;
        private int passesPerStep = 1;
        private ReduceOp reduceOp = ReduceOp.AVERAGE;
        private String prefix = "grad.";
        private double gradientWeight = 1;

        private Builder(Kolo kolo, List<Parameter> parameters) {
            this.kolo = Objects.requireNonNull(kolo, "kolo");
            this.parameters = List.copyOf(parameters);
            Set<String> names = new HashSet<>();
            for (Parameter p : this.parameters) {
                if (!names.add(p.name())) {
                    throw new IllegalArgumentException("two parameters are named '" + p.name()
                            + "'; names identify gradients across ranks and must be unique");
                }
            }
        }

        /** The local optimizer applied to averaged gradients; default plain SGD. */
        public Builder updateRule(UpdateRule rule) {
            this.rule = Objects.requireNonNull(rule, "rule");
            return this;
        }

        /** How gradients travel; default {@link Compression#NONE}. */
        public Builder compression(Compression compression) {
            this.compression = Objects.requireNonNull(compression, "compression");
            return this;
        }

        /** Backward passes accumulated locally per exchange and update; default 1. */
        public Builder backwardPassesPerStep(int passes) {
            Checks.atLeastOne("backwardPassesPerStep", passes);
            this.passesPerStep = passes;
            return this;
        }

        /**
         * How the ranks' gradients combine: {@link ReduceOp#AVERAGE} (the default), {@link ReduceOp#SUM}, or
         * {@link ReduceOp#ADASUM}, adaptive summation (Horovod's {@code op=hvd.Adasum}), with which more ranks
         * need no new learning rate. Accumulated backward passes are averaged locally in every case.
         */
        public Builder reduceOp(ReduceOp op) {
            Objects.requireNonNull(op, "op");
            if (op != ReduceOp.AVERAGE && op != ReduceOp.SUM && op != ReduceOp.ADASUM) {
                throw new IllegalArgumentException("gradients combine by AVERAGE, SUM or ADASUM, not " + op);
            }
            this.reduceOp = op;
            return this;
        }

        /** Prefix of the collective names, so two optimizers in one job do not collide; default "grad.". */
        public Builder namePrefix(String prefix) {
            this.prefix = Objects.requireNonNull(prefix, "prefix");
            return this;
        }

        /** This rank's gradient weight from the first step; see {@link DistributedOptimizer#setGradientWeight}. */
        public Builder gradientWeight(double weight) {
            this.gradientWeight = weight;
            return this;
        }

        /** @throws IllegalArgumentException if the gradient weight does not suit the reduce op */
        public DistributedOptimizer build() {
            checkedWeight(gradientWeight, reduceOp);
            return new DistributedOptimizer(this);
        }

        static double checkedWeight(double weight, ReduceOp op) {
            if (!(weight >= 0) || Double.isInfinite(weight)) {
                throw new IllegalArgumentException("a gradient weight is a share of the global batch, 0 or more "
                        + "(got " + weight + "): n_i * size / N for a rank of n_i of the step's N examples");
            }
            if (weight != 1 && op == ReduceOp.ADASUM) {
                throw new IllegalArgumentException("ADASUM combines gradients by their angles, not by batch sizes: "
                        + "a gradient weight (" + weight + ") needs AVERAGE or SUM");
            }
            return weight;
        }
    }
}
