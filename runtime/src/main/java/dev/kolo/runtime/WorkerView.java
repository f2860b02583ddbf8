package dev.kolo.runtime;

import dev.kolo.runtime.ControlMessage.Assignment;

/**
 * Immutable snapshot of what this worker knows about its generation, published by {@link WorkerVerticle}
 * for the {@link Kolo} handle to read from any thread.
 */
record WorkerView(Assignment assignment, WorkerInfo self, String coordinatorNode, long coordinatorGeneration,
                  KoloException abortCause) {

    static final WorkerView NONE = new WorkerView(null, null, null, 0, null);

    long generation() {
        return assignment == null ? 0 : assignment.generation();
    }

    boolean active() {
        return assignment != null && abortCause == null;
    }

    int size() {
        return assignment == null ? 0 : assignment.workers().size();
    }

    /** @return rank of {@code node} in this generation, or -1 */
    int rankOf(String node) {
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
}
