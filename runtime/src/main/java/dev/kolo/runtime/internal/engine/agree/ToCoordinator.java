package dev.kolo.runtime.internal.engine.agree;

import dev.kolo.runtime.internal.control.ControlMessage;

/**
 * The way from this rank to the coordinator, all a generation needs of the cluster it runs in: the cluster layer
 * seals and sends, so that agreement depends neither on membership nor on the event bus.
 */
@FunctionalInterface
public interface ToCoordinator {
    /** Sends {@code message} to the coordinator running on {@code coordinatorNode}. */
    void send(String coordinatorNode, ControlMessage message);
}
