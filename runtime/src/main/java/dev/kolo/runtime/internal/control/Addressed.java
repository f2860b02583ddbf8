package dev.kolo.runtime.internal.control;

/**
 * A control message on its way to the verticles of one node. With a job secret the codec binds the
 * destination into the message's tag, so a message captured on its way to one worker is refused by every
 * other; without one it is the message alone (see {@link ClusterNode#seal}).
 */
public record Addressed(String toNode, ControlMessage message) {
}
