/**
 * The machinery behind {@code ElasticState}'s live state: {@link dev.kolo.elastic.internal.StateRegistry}
 * (the registered tensors and values and the checks on registering, reading and setting them),
 * {@link dev.kolo.elastic.internal.StateEntry} (one registered tensor and how its bytes are copied) and
 * {@link dev.kolo.elastic.internal.WorkerIdentity} (the worker's default id for the blacklist). Uses the
 * runtime's API only, never {@code dev.kolo.elastic}, which drives it, so the two packages form no cycle. Not
 * API: other modules must not import it; it changes without notice.
 */
package dev.kolo.elastic.internal;
