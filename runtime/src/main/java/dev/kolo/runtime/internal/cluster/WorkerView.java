package dev.kolo.runtime.internal.cluster;

import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.WorkerInfo;
import dev.kolo.runtime.internal.observability.Readiness;

/**
 * Immutable snapshot of what this worker knows about its generation, published by {@link WorkerVerticle}
 * for the {@link Kolo} handle to read from any thread.
 */
public record WorkerView(Assignment assignment, WorkerInfo self, String coordinatorNode, long coordinatorGeneration,
                  KoloException abortCause) {

    public static final WorkerView NONE = new WorkerView(null, null, null, 0, null);

    public long generation() {
        return assignment == null ? 0 : assignment.generation();
    }

    boolean active() {
        return assignment != null && abortCause == null;
    }

    public int size() {
        return assignment == null ? 0 : assignment.workers().size();
    }

    /** @return rank of {@code node} in this generation, or -1 */
    public int rankOf(String node) {
        if (assignment == null || node == null) {
            return -1;
        }
        for (WorkerInfo w : assignment.workers()) {
            if (w.node().equals(node)) {
                return w.rank();
            }
        }
        return -1;
    }

    WorkerInfo worker(String node) {
        if (assignment != null) {
            for (WorkerInfo w : assignment.workers()) {
                if (w.node().equals(node)) {
                    return w;
                }
            }
        }
        return null;
    }

    /** This view as the health endpoint reports it. */
    public Readiness readiness() {
        if (active()) {
            return new Readiness(true, "rank " + self().rank() + " of " + size() + ", generation " + generation());
        }
        return new Readiness(false, assignment() == null ? "waiting for rendezvous"
                : "generation " + generation() + " aborted: " + abortCause().getMessage());
    }
}
