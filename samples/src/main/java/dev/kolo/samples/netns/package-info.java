/**
 * Several "hosts" on one machine: {@code NetnsLab} makes one network namespace per node behind a bridge of its own
 * (or loopback processes when not root), cuts, partitions and rate-limits their links. Both the chaos suite and
 * {@code bench allreduce --hosts} run on it, so it sits in its own package below both rather than in either.
 */
package dev.kolo.samples.netns;
