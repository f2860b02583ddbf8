/**
 * Metrics (Micrometer, Prometheus text), the Chrome-trace timeline and the health endpoint. Used by every
 * other package; uses none of the moving parts. {@code KoloMetrics} holds a worker's registry (several workers
 * may share a JVM; with the endpoint off nothing is recorded on the hot path); {@code ChromeTraceTimeline} writes
 * on a background thread in whole 4 KiB pages, so that a killed worker leaves complete events; a process set sees
 * its worker's meters and timeline through {@code ProcessSetMeters} and {@code PrefixedTimeline};
 * {@code HealthServer} is the metrics port's router.
 */
package dev.kolo.runtime.internal.observability;
