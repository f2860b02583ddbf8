package dev.kolo.runtime.internal.dataplane;

import dev.kolo.runtime.internal.collectives.DataPlane;
import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.WorkerInfo;

/** Opens the data plane of one generation: a ring over the workers of the assignment, or the fast path of one. */
public interface DataPlaneFactory {
    /** Blocks until the data plane is ready or fails with a {@link KoloException}; runs on the collective thread. */
    DataPlane open(Assignment assignment, WorkerInfo self);
}
