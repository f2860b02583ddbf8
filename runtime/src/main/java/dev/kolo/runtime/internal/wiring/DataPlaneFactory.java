package dev.kolo.runtime.internal.wiring;

import dev.kolo.runtime.Settings;
import dev.kolo.runtime.internal.collectives.DataPlane;
import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.WorkerInfo;
import java.time.Duration;

/** Opens the data plane of one generation: a ring over the workers of the assignment, or the fast path of one. */
public interface DataPlaneFactory {
    /**
     * Blocks until the data plane is ready or fails with a {@link KoloException}; runs on the collective thread.
     *
     * @param assignment the generation, or a process set of it: its workers in the set's rank order
     * @param self this worker, with its rank in {@code assignment}
     * @param channel 0 for the generation's own links, else the process set's id (its links are its own)
     */
    DataPlane open(Assignment assignment, WorkerInfo self, int channel);

    /**
     * @return the CPUs this host gives the job's ranks on it, which decides how their waits poll: the process's
     *         CPUs at start, not the share it may be bound to since
     */
    default int hostCpus() {
        return Runtime.getRuntime().availableProcessors();
    }

    /**
     * @return how long a wait polls before it parks where each of the host's ranks has a core of its own
     *         ({@code KOLO_POLL_TIME})
     */
    default Duration pollTime() {
        return Settings.POLL_TIME.defaultValue();
    }

    /**
     * @return how many ranks of {@code self}'s host (itself included) were given the same CPUs as it, and so share
     *         {@link #hostCpus()}
     */
    default int ranksSharingCpus(WorkerInfo self, java.util.List<WorkerInfo> workers) {
        return self.localSize();
    }
}
