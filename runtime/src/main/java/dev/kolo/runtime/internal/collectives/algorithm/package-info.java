/**
 * One small file per collective algorithm (Gloo's algorithm objects), each an
 * {@link dev.kolo.runtime.internal.collectives.algorithm.Algorithm} run on the one reused
 * {@link dev.kolo.runtime.internal.collectives.algorithm.OpDescription} of its plane: the ring allreduce,
 * reduce-scatter and allgather, the chain and binomial broadcasts, the pairwise alltoall, the direct small allreduce,
 * recursive doubling and Rabenseifner's allreduce, Adasum, the recursive-doubling allgather, the hierarchical
 * allreduce across hosts (with the {@link dev.kolo.runtime.internal.collectives.algorithm.HostLayout} it splits by),
 * and the agreement rounds' recursive-doubling combine.
 */
package dev.kolo.runtime.internal.collectives.algorithm;
