package dev.kolo.runtime.internal.control;

/**
 * One worker as the control plane knows it. Before assignment {@code rank}, {@code localRank} and
 * {@code localSize} are -1.
 *
 * @param node     cluster node id (the Hazelcast member UUID)
 * @param host     address of the data plane
 * @param dataPort data-plane port
 * @param metricsPort port of the worker's metrics, health and status page, or 0 when it serves none
 * @param pid      operating-system process id, for messages a person reads
 * @param rankHint stable rank requested by the worker, or -1
 * @param cpus     the CPUs its process could run on when it started, as the kernel lists them ({@code 0-3,6}), or
 *                 empty when unknown: co-located ranks split a set of CPUs only among those that were given it
 */
public record WorkerInfo(String node, String host, int dataPort, int metricsPort, long pid, int rankHint, int rank,
                         int localRank, int localSize, String cpus) {

    /** A worker whose CPUs are not known. */
    public WorkerInfo(String node, String host, int dataPort, int metricsPort, long pid, int rankHint, int rank,
                      int localRank, int localSize) {
        this(node, host, dataPort, metricsPort, pid, rankHint, rank, localRank, localSize, "");
    }

    public WorkerInfo withRanks(int newRank, int newLocalRank, int newLocalSize) {
        return new WorkerInfo(node, host, dataPort, metricsPort, pid, rankHint, newRank, newLocalRank, newLocalSize,
                cpus);
    }

    /** @return a short description for log lines and errors, e.g. {@code 127.0.0.1 pid 4242} */
    public String describe() {
        return host + " pid " + pid + (rankHint >= 0 ? " hint " + rankHint : "");
    }
}
