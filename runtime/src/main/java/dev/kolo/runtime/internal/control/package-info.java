/**
 * The control wire: the messages workers and the coordinator exchange over the event bus, their codec and
 * bounds checks, the op descriptions they carry ({@code OpSpec}, {@code OpType}) and the event-bus
 * addresses. Also the rules both sides of the wire must apply alike to what it carries: {@code ControlChecks}
 * and {@code FusionPlan} (which agreed ops run fused), here so that the coordinator's negotiation and the
 * ranks' engine share them without one depending on the other. Depends on the public API only.
 */
package dev.kolo.runtime.internal.control;
