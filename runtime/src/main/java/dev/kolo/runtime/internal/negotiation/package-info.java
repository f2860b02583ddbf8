/**
 * The coordinator side of an op: which tensors are ready on every rank, validation of what ranks
 * submitted, and the batches it answers with (fused by {@code control.FusionPlan}, the rule the rank side
 * applies too).
 */
package dev.kolo.runtime.internal.negotiation;
