/**
 * Element-wise kernels for the collectives: reduce (SUM, MIN, MAX, PRODUCT), scale, fused reduce-then-scale and
 * float32/float16/bfloat16 conversion over direct memory, in two implementations with identical results: native
 * (C++ compiled by JavaCPP, SIMD chosen at run time; {@link dev.kolo.kernels.NativeKernels}) and the Java
 * fallback; {@link dev.kolo.kernels.Kernels} picks one.
 * {@link dev.kolo.kernels.NativeHeap} tunes the C library's heap for engines that churn large tensors;
 * {@link dev.kolo.kernels.ThreadAffinity} reads and binds the CPUs of the process's threads (Linux).
 * Depends on nothing else of Kolo.
 */
package dev.kolo.kernels;
