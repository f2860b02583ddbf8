/**
 * The collectives as the engine and the wiring see them (Gloo's algorithms behind one seam): the
 * {@link dev.kolo.runtime.internal.collectives.DataPlane} the engine runs a generation's agreed ops on, the
 * element-wise arithmetic ({@link dev.kolo.runtime.internal.collectives.Reducer}, by the kernels in
 * {@link dev.kolo.runtime.internal.collectives.KernelReducer}), the agreement round's combination rule the engine
 * supplies ({@link dev.kolo.runtime.internal.collectives.RoundCombiner}), which algorithm takes which size
 * ({@link dev.kolo.runtime.internal.collectives.AllreduceAlgorithms}), the hierarchy setting, and the data plane of a
 * job of one ({@link dev.kolo.runtime.internal.collectives.SingleRankDataPlane}). Below it: {@code schedule} (what
 * algorithms are built of), {@code algorithm} (one small file per algorithm) and {@code generation} (a generation's
 * data plane over its links); each uses only those before it, and the transport.
 */
package dev.kolo.runtime.internal.collectives;
