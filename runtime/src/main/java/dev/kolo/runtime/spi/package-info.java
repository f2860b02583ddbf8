/**
 * Access for Kolo's own modules (checkpoint, elastic) to parts of a worker that are not public API, such as its
 * cluster member for cluster-wide state. Not for applications: it may change in any release, and an
 * architecture test keeps every other module out.
 */
package dev.kolo.runtime.spi;
