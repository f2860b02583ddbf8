/**
 * How one command becomes N local worker processes: the launcher (output routed per rank, the first
 * failure or Ctrl-C stops them all), Kolo's JVM options for every JVM it or a benchmark starts (so that a
 * program needs none of its own), the watch that ends a worker whose launcher is gone, the {@code -np} and
 * {@code --json} options the benchmarks mix in, and the version every command prints. Below every other samples
 * package; uses only the runtime's public API.
 */
package dev.kolo.samples.launch;
