/**
 * The coordinator side of an op: which tensors are ready on every rank, validation of what ranks
 * submitted, and the fusion plan that turns ready tensors into batches (shared with the rank side).
 */
package dev.kolo.runtime.internal.negotiation;
