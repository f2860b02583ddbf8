package dev.kolo.runtime.internal.engine;

import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.internal.control.ControlMessage;

/**
 * What the rank-side engine needs of the cluster it runs in: the job's settings and a way to reach the
 * coordinator. The cluster layer implements it, so that the engine does not depend on membership.
 */
public interface ControlChannel {
    /** The job's settings. */
    KoloConfig config();

    /** Sends {@code message} to the coordinator running on {@code coordinatorNode}, sealed for it. */
    void sendToCoordinator(String coordinatorNode, ControlMessage message);
}
