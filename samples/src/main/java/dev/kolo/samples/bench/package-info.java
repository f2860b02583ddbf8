/**
 * The benchmarks under {@code bench}: kernels, allreduce, scaling, tensors and elastic recovery, with their
 * shared options and the ResNet-50 gradient shapes. Most run as N worker processes of this same program.
 * Depends on the kernels, runtime and elastic modules and on the launch package only.
 */
package dev.kolo.samples.bench;
