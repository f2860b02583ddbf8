package dev.kolo.samples.docs;

import dev.kolo.elastic.Elastic;
import dev.kolo.elastic.ElasticState;
import dev.kolo.elastic.data.ElasticSampler;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.train.Compression;
import dev.kolo.runtime.train.DistributedOptimizer;
import dev.kolo.runtime.train.LearningRateSchedule;
import dev.kolo.runtime.train.LrScaling;
import dev.kolo.runtime.train.Parameter;
import dev.kolo.runtime.train.Sgd;
import java.util.Iterator;
import java.util.List;
import java.util.function.Consumer;

/**
 * The training loops the guides show (docs/training-loop.md, docs/elastic.md), compiled with the build so that
 * the documents' copies of them (checked by {@link DocumentedCodeTest}) always compile. {@link YourModel} stands
 * for the reader's model: what Kolo needs of it.
 */
final class GuideSnippets {
    private GuideSnippets() {
    }

    /** What a training loop of your own needs from its model: its parameters, a forward and a backward pass. */
    interface YourModel {
        /** @return the trainable arrays, named alike on every rank */
        List<Parameter> parameters();

        /** Runs the forward pass on the samples of these indices; @return the loss */
        double forward(int[] indices);

        /** Runs the backward pass, handing each parameter to {@code ready} as soon as its gradient is complete. */
        void backward(Consumer<Parameter> ready);
    }

    static void ownLoop(Kolo kolo, YourModel model, long samples, int epochs) {
        // example:own-loop
        DistributedOptimizer opt = DistributedOptimizer.builder(kolo, model.parameters())
                .updateRule(new Sgd(0.9, 0)).compression(Compression.FP16).backwardPassesPerStep(1)
                .reduceOp(ReduceOp.AVERAGE).build();      // or SUM, or ADASUM
        opt.broadcastParameters(0);                       // everyone starts from rank 0's weights
        ElasticSampler sampler = ElasticSampler.builder(kolo).batchSize(64).seed(42).build();
        LearningRateSchedule lr = LearningRateSchedule.builder(0.05)
                .scaling(LrScaling.LINEAR, kolo.size()).warmupEpochs(1)
                .stepsPerEpoch(sampler.stepsPerEpoch(samples)).build();
        long step = 0;
        while (sampler.epoch() < epochs) {
            for (Iterator<int[]> batches = sampler.batches(samples); batches.hasNext(); ) {
                model.forward(batches.next());                // this rank's share of the step's global batch
                model.backward(opt::gradientReady);           // each gradient goes out as soon as it is complete
                opt.step(lr.rate(step++));                    // waits for the averages, then updates
                sampler.stepped();
            }
        }
        // example:end
    }

    static void elasticLoop(YourModel model, long samples, int epochs) {
        // example:elastic-loop
        Sgd rule = new Sgd(0.9, 0);
        try (Kolo kolo = Kolo.init();
             ElasticState state = ElasticState.builder(kolo).checkpointEvery(10).build()) {
            state.parameters(model.parameters());             // the live float[]s: weights
            state.updateRule(rule, model.parameters());       // and the rule's state (SGD's velocity)
            ElasticSampler sampler = ElasticSampler.builder(kolo).batchSize(64).seed(42).build().register(state);
            state.value("step", 0L);                          // a long, double or String of your own
            state.onReset(e -> System.out.println("now " + e.size() + " workers, this one rank " + e.rank()));
            Elastic.runOrExit(kolo, state, s -> {             // or Elastic.run, which throws instead of exiting
                // Entered again after every reset: build what depends on the generation here.
                DistributedOptimizer opt = DistributedOptimizer.builder(kolo, model.parameters())
                        .updateRule(rule).build();
                while (sampler.epoch() < epochs) {
                    for (Iterator<int[]> it = sampler.batches(samples); it.hasNext(); ) {
                        model.forward(it.next());
                        model.backward(opt::gradientReady);
                        opt.step(0.05 * kolo.size());
                        sampler.stepped();
                        long step = s.longValue("step") + 1;
                        s.set("step", step);
                        if (step % 10 == 0) {
                            s.commit();                       // cheap: one off-heap copy and a tiny agreement
                        }
                    }
                }
                return null;
            });
        }
        // example:end
    }
}
