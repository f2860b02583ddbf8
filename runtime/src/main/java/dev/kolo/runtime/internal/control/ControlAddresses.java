package dev.kolo.runtime.internal.control;

/**
 * Event-bus addresses of one job's control plane. Every address names a node, so a message reaches exactly
 * the worker or coordinator it is meant for even while the coordinator changes.
 */
public final class ControlAddresses {
    private final String prefix;

    public ControlAddresses(String jobName) {
        this.prefix = "kolo." + jobName + ".";
    }

    /** Control messages for the worker on {@code node}. */
    public String worker(String node) {
        return prefix + "worker." + node;
    }

    /** Control messages for the coordinator role, when {@code node} holds it. */
    public String coordinator(String node) {
        return prefix + "coordinator." + node;
    }

    /** Local-only membership change notifications on {@code node}. */
    public String membersLocal(String node) {
        return prefix + "members." + node;
    }

    /** Local-only facts for the status board of the worker on {@code node}. */
    public String status(String node) {
        return prefix + "status." + node;
    }

    /** Local-only requests from the {@link Kolo} handle to its own worker verticle. */
    String api(String node) {
        return prefix + "api." + node;
    }

    /** The first eight characters of a node id: enough to tell the nodes of one job apart in a log line. */
    public static String shortId(String node) {
        return node == null ? "-" : node.substring(0, Math.min(8, node.length()));
    }
}
