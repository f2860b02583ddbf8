package dev.kolo.runtime;

import dev.kolo.runtime.ControlMessage.Assignment;

/** Opens the data plane of one generation: a ring over the workers of the assignment, or the fast path of one. */
interface DataPlaneFactory {
    /** Blocks until the data plane is ready or fails with a {@link KoloException}; runs on the collective thread. */
    DataPlane open(Assignment assignment, WorkerInfo self);
}
