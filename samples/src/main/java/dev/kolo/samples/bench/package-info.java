/**
 * The benchmarks under {@code bench}: kernels, checkpoint, allreduce, scaling, tensors and elastic recovery, with
 * their shared options and the ResNet-50 gradient shapes; {@code bench model}, the cost model, which runs no job,
 * is the subpackage {@code model}. Most run as N worker processes of this same program; the kernels and checkpoint
 * benchmarks ({@code KernelBenchmark}, {@code CheckpointBenchmark}) run in-process and live here rather than in
 * their library jars, on those modules' public API only. Depends on the kernels, runtime, checkpoint and elastic
 * modules and on the launch and netns packages only.
 */
package dev.kolo.samples.bench;
