package dev.kolo.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.training.TrainingConfig;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import dev.kolo.elastic.ElasticState;
import dev.kolo.runtime.train.Adam;
import dev.kolo.runtime.train.AdamW;
import dev.kolo.runtime.train.Lamb;
import dev.kolo.runtime.train.Parameter;
import dev.kolo.runtime.train.Sgd;
import dev.kolo.runtime.train.UpdateRule;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Kolo's update rules as a DJL {@link Optimizer}, for a {@link TrainingConfig}: SGD with momentum, Adam, AdamW and
 * LAMB, whose state (momentum, moments, step counts, the learning-rate tracker's update counts) a
 * {@link KoloTrainer} registers with an {@link ElasticState}, so that elastic commits and checkpoints hold it and a
 * restored job continues exactly as it would have. DJL's own optimizers keep their state private, and start from
 * zero after every restore.
 *
 * <pre>{@code
 * TrainingConfig config = new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
 *         .optOptimizer(KoloOptimizer.koloAdamW().learningRate(Tracker.fixed(0.001f)).weightDecay(0.01).build());
 * }</pre>
 *
 * <p>The factories are named {@code kolo...} so that they do not hide DJL's {@code Optimizer.sgd()},
 * {@code adam()}, {@code adamW()}. The rules are those of {@code dev.kolo.runtime.train} ({@link Sgd}, {@link Adam}, {@link AdamW}, {@link Lamb}),
 * with their arithmetic and defaults: Adam adds the weight decay to the gradient, AdamW and LAMB decay the weights
 * apart from it; each parameter counts its own steps for the bias corrections. Each update reads the weight and
 * the gradient from the engine's memory into Kolo's arrays, writes the weight back and clears the parameter's
 * gradient for the next backward pass (as DJL's own optimizers do): where the engine hands out a view of its memory
 * (PyTorch on CPU) that is three copies of the parameter's bytes and a clear, with no allocation. State is
 * kept per parameter under the block's parameter name (the same on every rank), once a {@link KoloTrainer} has
 * told it the names; before that, under DJL's parameter id. One training thread.
 */
public final class KoloOptimizer extends Optimizer {
    private final UpdateRule rule;
    private final Tracker learningRate;
    private final Map<String, Slot> byId = new HashMap<>();
    private Map<String, String> namesById = Map.of();

    private KoloOptimizer(UpdateRule rule, Tracker learningRate) {
        super(new Base());
        this.rule = rule;
        this.learningRate = learningRate;
    }

    /** @return SGD: {@code v = momentum v + g + weightDecay w; w -= lr v} (defaults: momentum 0, decay 0) */
    public static Builder koloSgd() {
        return new Builder("sgd");
    }

    /** @return Adam with the decay added to the gradient (L2), as DJL's and PyTorch's Adam */
    public static Builder koloAdam() {
        return new Builder("adam");
    }

    /** @return AdamW: decoupled weight decay, {@code w *= 1 - lr wd}, as PyTorch's AdamW */
    public static Builder koloAdamW() {
        return new Builder("adamw");
    }

    /** @return LAMB (You et al. 2019): AdamW's step scaled by each parameter's trust ratio, for large batches */
    public static Builder koloLamb() {
        return new Builder("lamb");
    }

    /**
     * @param rule any of Kolo's update rules, or one of your own (its {@link UpdateRule#state} is what is committed)
     * @return a builder for an optimizer that applies it
     */
    public static Builder of(UpdateRule rule) {
        Builder b = new Builder("custom");
        b.rule = Objects.requireNonNull(rule, "rule");
        return b;
    }

    /** Applies the rule to one parameter from its gradient (DJL's trainer calls it at every step). */
    @Override
    public void update(String parameterId, NDArray weight, NDArray grad) {
        Slot s = byId.computeIfAbsent(parameterId, id -> new Slot(namesById.getOrDefault(id, id), weight));
        s.arrays.readValues(weight, s.parameter.values());
        s.arrays.takeGradient(weight, grad, s.parameter.gradient());
        float lr = learningRate.getNewValue(s.parameter.name(), Math.toIntExact(s.updates[0]));
        s.updates[0]++;
        rule.apply(s.parameter, lr);
        s.arrays.writeValues(weight, s.parameter.values());
    }

    /**
     * Names the parameters by the block's names and registers the rule's state for each, and its update counts,
     * with {@code state}.
     *
     * @param parameters the trained parameters: DJL id and block name, and the engine's array
     */
    void register(ElasticState state, List<Trained> parameters) {
        Map<String, String> names = new HashMap<>();
        List<Parameter> mirrors = new ArrayList<>();
        for (Trained t : parameters) {
            names.put(t.id(), t.name());
            Slot s = new Slot(t.name(), t.array());
            byId.put(t.id(), s);
            mirrors.add(s.parameter);
            state.longs(t.name() + ".updates", s.updates, 1);
        }
        namesById = Map.copyOf(names);
        state.updateRule(rule, mirrors);
    }

    /** @return the rule this optimizer applies */
    public UpdateRule rule() {
        return rule;
    }

    /** A trained parameter as the trainer knows it: DJL's id, the block's name, the engine's array. */
    record Trained(String id, String name, NDArray array) {
    }

    /** One parameter's Kolo arrays, its copy helper and its update count. */
    private static final class Slot {
        final Parameter parameter;
        final EngineArrays arrays = new EngineArrays();
        final long[] updates = new long[1];

        Slot(String name, NDArray weight) {
            int size = Math.toIntExact(weight.size());
            this.parameter = Parameter.of(name, new float[size], new float[size], weight.getShape().getShape());
        }
    }

    /** DJL's optimizers are built from a builder of its own; Kolo's rules take none of its settings. */
    private static final class Base extends OptimizerBuilder<Base> {
        @Override
        protected Base self() {
            return this;
        }
    }

    /** Builds a {@link KoloOptimizer}. */
    public static final class Builder {
        private final String kind;
        private UpdateRule rule;
        private Tracker learningRate = Tracker.fixed(0.001f);
        private double momentum;
        private double weightDecay;
        private double beta1 = 0.9;
        private double beta2 = 0.999;
        private double epsilon = 1e-8;

        private Builder(String kind) {
            this.kind = kind;
        }

        /** @param tracker the learning rate per update (default fixed at 0.001) */
        public Builder learningRate(Tracker tracker) {
            this.learningRate = Objects.requireNonNull(tracker, "tracker");
            return this;
        }

        /** @param rate a fixed learning rate */
        public Builder learningRate(float rate) {
            return learningRate(Tracker.fixed(rate));
        }

        /** @param momentum SGD's momentum, in [0, 1) (default 0) */
        public Builder momentum(double momentum) {
            requireKind("momentum", "sgd");
            this.momentum = momentum;
            return this;
        }

        /** @param decay the weight decay, each rule's own way (default 0) */
        public Builder weightDecay(double decay) {
            requireKind("weightDecay", "sgd", "adam", "adamw", "lamb");
            this.weightDecay = decay;
            return this;
        }

        /** @param beta1 the first moment's decay (default 0.9) @param beta2 the second's (default 0.999) */
        public Builder betas(double beta1, double beta2) {
            requireKind("betas", "adam", "adamw", "lamb");
            this.beta1 = beta1;
            this.beta2 = beta2;
            return this;
        }

        /** @param epsilon added to the second moment's root (default 1e-8) */
        public Builder epsilon(double epsilon) {
            requireKind("epsilon", "adam", "adamw", "lamb");
            this.epsilon = epsilon;
            return this;
        }

        /** @throws IllegalArgumentException naming a value out of its range and the range */
        public KoloOptimizer build() {
            UpdateRule r = switch (kind) {
                case "sgd" -> new Sgd(momentum, weightDecay);
                case "adam" -> new Adam(beta1, beta2, epsilon, weightDecay);
                case "adamw" -> new AdamW(beta1, beta2, epsilon, weightDecay);
                case "lamb" -> new Lamb(beta1, beta2, epsilon, weightDecay);
                default -> rule;
            };
            return new KoloOptimizer(r, learningRate);
        }

        private void requireKind(String setting, String... kinds) {
            for (String k : kinds) {
                if (k.equals(kind)) {
                    return;
                }
            }
            throw new IllegalStateException(setting + " is not a setting of " + (kind.equals("custom")
                    ? "an optimizer built of a rule (set it on the rule)" : kind));
        }
    }
}
