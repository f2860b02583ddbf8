/**
 * What a Kolo worker asks of the JVM it runs in: {@link dev.kolo.runtime.jvm.JvmOptions}, the module access and
 * the switches Hazelcast (Kolo's cluster membership) and Kolo's native kernels use, declared once for everything
 * that starts a worker (the launcher, the benchmarks, the build's test JVMs and the worker jar's manifest, the
 * last two held equal to it by tests), and the check that tells which of them a running JVM lacks.
 */
package dev.kolo.runtime.jvm;
