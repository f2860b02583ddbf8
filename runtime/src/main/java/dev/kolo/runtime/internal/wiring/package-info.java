/**
 * The data plane's wiring for a worker (named apart from the {@code DataPlane} interface it opens): the data port
 * bound at start-up, the transport's endpoint on it, and per generation the {@code DataPlane} the engine runs (the
 * collectives over the assignment's peer links, or a job of one). Knows nothing of membership, negotiation or the
 * engine.
 */
package dev.kolo.runtime.internal.wiring;
