package dev.kolo.runtime.internal.engine.drive;

import dev.kolo.runtime.internal.collectives.DataPlane;

/**
 * The thread that drives the engine when no caller does, as the {@link EngineDriver} sees it: something to wake
 * when work is left for it. The driver knows no more of it, so the thread and the driver do not point at each
 * other.
 */
public interface DrivingThread {
    /** Work was queued: if the thread waits idle, wake it (and {@code dp}'s idle wait, when not null). */
    void wakeIfIdle(DataPlane dp);

    /** The lock was let go with work left: if the thread parked for the callers, wake it. */
    void wakeIfParked();
}
