/**
 * The benchmarks under {@code bench}: kernels, checkpoint, allreduce, scaling, tensors and elastic recovery, with
 * their shared options and the ResNet-50 gradient shapes; and {@code bench model}, the α-β cost model of the
 * collectives ({@code CostModel}, {@code Algorithm}, {@code CostModelFit}), which runs no job. Most run as N
 * worker processes of this same program; the kernels and checkpoint benchmarks ({@code KernelBenchmark},
 * {@code CheckpointBenchmark}) run in-process and live here rather than in their library jars, on those modules'
 * public API only. Depends on the kernels, runtime, checkpoint and elastic modules and on the launch package only.
 */
package dev.kolo.samples.bench;
