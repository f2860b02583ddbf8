/**
 * The bridge from agreed ops to bytes on the wire: the {@code DataPlane} primitives a generation runs
 * (ring, or one rank alone), opened per generation from the assignment, and the native reduction kernels.
 * Uses the ring; knows nothing of membership, negotiation or the engine.
 */
package dev.kolo.runtime.internal.dataplane;
