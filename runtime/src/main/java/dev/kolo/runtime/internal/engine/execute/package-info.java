/**
 * Running what the ranks agreed on: {@code BatchExecutor} (small allreduces from the round's own bytes, batches
 * fused by {@code control.FusionPlan}, each op's phases recorded), {@code CollectiveOps} (one batch as calls into
 * the data plane, the fusion buffer), {@code EagerReduction} (the postscale of an allreduce the round reduced) and
 * {@code AverageScaling} (AVERAGE as a sum and its scales, which the round applies too). It sees the generation only
 * as the narrow facts it is handed: its size, {@code BatchKnobs} (the fusion threshold in force) and
 * {@code BatchOutcomes} (where results and an end of the generation go).
 */
package dev.kolo.runtime.internal.engine.execute;
