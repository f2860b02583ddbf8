/**
 * {@code bench model}: the α-β cost model of Kolo's collectives ({@code CostModel}), the counts of each algorithm
 * ({@code Algorithm}), a cached ResNet-50 step as the runtime runs it ({@code ResNet50Step}) and the fit of the model
 * to measured {@code bench allreduce} lines ({@code CostModelFit}). It runs no job, so it lives apart from the
 * benchmarks that do; it reads the runtime's thresholds from their settings' declarations and the gradient shapes
 * from the bench package.
 */
package dev.kolo.samples.bench.model;
