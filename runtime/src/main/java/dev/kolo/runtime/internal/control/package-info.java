/**
 * The control wire: the messages workers and the coordinator exchange over the event bus, their codec and
 * bounds checks, the op descriptions they carry ({@code OpSpec}, {@code OpType}) and the event-bus
 * addresses. Depends on the public API only.
 */
package dev.kolo.runtime.internal.control;
