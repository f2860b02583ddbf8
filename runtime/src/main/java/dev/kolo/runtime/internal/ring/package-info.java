/**
 * The data plane proper: one listening endpoint per worker, a TCP (or TLS) ring per generation, the
 * authenticated handshake, framing, and one small file per algorithm (ring allreduce, reduce-scatter,
 * allgather, broadcast, all-to-all, direct exchange, agreement rounds). Depends on the public API only.
 */
package dev.kolo.runtime.internal.ring;
