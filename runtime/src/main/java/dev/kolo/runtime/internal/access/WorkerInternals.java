package dev.kolo.runtime.internal.access;

import com.hazelcast.core.HazelcastInstance;
import java.util.List;

/** The parts of a wired worker that Kolo's checkpoint and elastic modules use; the worker owns their lifecycle. */
public interface WorkerInternals {
    /** @return the worker's Hazelcast member */
    HazelcastInstance hazelcast();

    /**
     * @return workers of the current generation that the cluster saw leave, first to go first (empty until the
     *         cluster notices a loss: a killed worker within the heartbeat timeout)
     */
    List<Departure> departed();

    /** @return this rank's progress, where the modules note commits and checkpoints for the status page */
    ProgressNotes progress();
}
