/**
 * The collectives over a generation's links, one small file per algorithm and its schedule (ring allreduce,
 * reduce-scatter and allgather, chain broadcast, pairwise all-to-all, the direct small allreduce, recursive
 * doubling and Rabenseifner's allreduce, recursive-doubling allgather, binomial broadcast, the agreement rounds'
 * recursive-doubling combine), the table that picks an algorithm by size
 * ({@link dev.kolo.runtime.internal.collectives.AllreduceAlgorithms}), the byte regions they work in, the element-wise arithmetic by the kernels
 * ({@link dev.kolo.runtime.internal.collectives.KernelReducer}), and the
 * {@link dev.kolo.runtime.internal.collectives.DataPlane} the engine runs agreed ops on:
 * {@link dev.kolo.runtime.internal.collectives.GenerationDataPlane} over peer links, or
 * {@link dev.kolo.runtime.internal.collectives.SingleRankDataPlane} for a job of one. Uses the transport only.
 */
package dev.kolo.runtime.internal.collectives;
