/**
 * Metrics (Micrometer, Prometheus text), the Chrome-trace timeline and the health endpoint. Used by every
 * other package; uses none of the moving parts.
 */
package dev.kolo.runtime.internal.observability;
