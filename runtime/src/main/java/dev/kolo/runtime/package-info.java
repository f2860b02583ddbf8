/**
 * The public API of the Kolo runtime: {@link dev.kolo.runtime.Kolo} (join a job, submit collectives),
 * {@link dev.kolo.runtime.KoloConfig}, {@link dev.kolo.runtime.Tensor} and its {@link dev.kolo.runtime.DType},
 * {@link dev.kolo.runtime.ReduceOp}, {@link dev.kolo.runtime.Discovery} and the exceptions a program handles.
 * Everything under {@code dev.kolo.runtime.internal} is implementation and may change without notice.
 */
package dev.kolo.runtime;
