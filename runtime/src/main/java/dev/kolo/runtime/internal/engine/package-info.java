/**
 * The rank side of an op, from submit to result: pending ops, the tensor cache every rank holds alike,
 * agreement rounds among the ranks on the data plane (with small tensors reduced inside them), execution
 * of coordinator responses, and the collective thread. Reaches the coordinator through
 * {@code ControlChannel}, so it does not depend on membership.
 */
package dev.kolo.runtime.internal.engine;
