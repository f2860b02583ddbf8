/**
 * The coordinator side of an op: which tensors are ready on every rank, validation of what ranks
 * submitted, and the batches it answers with (fused by {@code control.FusionPlan}, the rule the rank side
 * applies too). {@code Negotiator} collects requests per name and answers ready ones, {@code Validation}
 * compares what the ranks submitted and names the disagreeing ranks, {@code SentResponses} keeps what was sent
 * until every rank holds it, so that a lost message is answered again rather than stalling the job.
 */
package dev.kolo.runtime.internal.negotiation;
