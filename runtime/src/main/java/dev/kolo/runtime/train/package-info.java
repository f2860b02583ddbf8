/**
 * Data-parallel training on top of {@link dev.kolo.runtime.Kolo}, in the style of Horovod's
 * {@code DistributedOptimizer}: a training loop keeps its parameters and gradients in plain {@code float[]}
 * arrays ({@link dev.kolo.runtime.train.Parameter}), hands each gradient to a
 * {@link dev.kolo.runtime.train.DistributedOptimizer} as soon as its backward pass produces it (so the
 * exchange overlaps the rest of the backward pass), and calls {@code step} once the backward pass is done.
 * {@link dev.kolo.runtime.train.LearningRateSchedule} scales the learning rate with the number of workers
 * and warms it up gradually, the large-batch recipe of Goyal et al. (2017).
 *
 * <p>The update rules are {@link dev.kolo.runtime.train.Sgd} (momentum, L2 weight decay),
 * {@link dev.kolo.runtime.train.Adam} (L2 weight decay through the gradient, as DJL's and PyTorch's Adam),
 * {@link dev.kolo.runtime.train.AdamW} (decoupled weight decay) and {@link dev.kolo.runtime.train.Lamb} (Adam
 * with a per-parameter trust ratio, for very large batches), or any lambda. A rule hands the state it keeps per
 * parameter (velocity; moments and step count) to {@link dev.kolo.runtime.train.UpdateRule#state} as live
 * arrays, so that {@code ElasticState.updateRule(rule, parameters)} in module kolo-elastic commits, checkpoints
 * and restores it with the weights: after a failure training resumes with the optimizer where it was.
 *
 * <pre>{@code
 * List<Parameter> params = model.parameters();
 * DistributedOptimizer opt = DistributedOptimizer.builder(kolo, params)
 *         .updateRule(new Sgd(0.9, 0)).compression(Compression.NONE).build();   // or new AdamW(0.01), ...
 * opt.broadcastParameters(0);                       // every rank starts from rank 0's initial parameters
 * LearningRateSchedule lr = LearningRateSchedule.builder(0.05)
 *         .scaling(LrScaling.LINEAR, kolo.size()).warmupEpochs(1).stepsPerEpoch(stepsPerEpoch).build();
 * for (long step = 0; ...; step++) {
 *     model.forward(batch);
 *     model.backward(opt::gradientReady);           // per layer, last layer first
 *     opt.step(lr.rate(step));                       // waits for the averaged gradients, then updates
 * }
 * }</pre>
 */
package dev.kolo.runtime.train;
