/**
 * The data plane's wiring for a worker (named apart from the {@code DataPlane} interface it opens): the data port
 * bound at start-up, the transport's endpoint on it, and per generation the {@code DataPlane} the engine runs (the
 * collectives over the assignment's peer links, or a job of one). Knows nothing of membership, negotiation or the
 * engine. {@code DataPlanes} opens the endpoint and each generation's plane, {@code DataPlaneListener} is the
 * bound port, {@code CpuBinding} binds a rank to its share of its host's CPUs when a generation's plane opens
 * ({@code KOLO_CPU_BIND}).
 */
package dev.kolo.runtime.internal.wiring;
