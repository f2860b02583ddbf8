package dev.kolo.runtime;

/**
 * Event-bus addresses of one job's control plane. Every address names a node, so a message reaches exactly
 * the worker or coordinator it is meant for even while the coordinator changes.
 */
final class ControlAddresses {
    private final String prefix;

    ControlAddresses(String jobName) {
        this.prefix = "kolo." + jobName + ".";
    }

    /** Control messages for the worker on {@code node}. */
    String worker(String node) {
        return prefix + "worker." + node;
    }

    /** Control messages for the coordinator role, when {@code node} holds it. */
    String coordinator(String node) {
        return prefix + "coordinator." + node;
    }

    /** Local-only membership change notifications on {@code node}. */
    String membersLocal(String node) {
        return prefix + "members." + node;
    }

    /** Local-only requests from the {@link Kolo} handle to its own worker verticle. */
    String api(String node) {
        return prefix + "api." + node;
    }
}
