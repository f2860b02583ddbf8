/**
 * What the algorithms are built of: the ranks one runs among and this rank's links to them
 * ({@link dev.kolo.runtime.internal.collectives.schedule.Peers}, with the ring's shared schedule in
 * {@link dev.kolo.runtime.internal.collectives.schedule.RingContext}), the byte regions a collective works in (one
 * buffer, or a fused batch's tensors one after the other), the transport's {@code Schedule}s of frames they run
 * (the pipelined ring's blocks, one step with one partner, one frame each way), a received chunk reduced from staging
 * or where it lies in a shared ring, and how the log-step algorithms fold a size that is no power of two.
 */
package dev.kolo.runtime.internal.collectives.schedule;
