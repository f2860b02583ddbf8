package dev.kolo.runtime.internal.wiring;

import dev.kolo.kernels.ThreadAffinity;
import dev.kolo.runtime.internal.control.WorkerInfo;
import java.util.Arrays;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Binds this worker's process to its share of the host's CPUs while other ranks of its job share the host
 * ({@code KOLO_CPU_BIND=auto}), as {@code mpirun --bind-to} does. Unbound, the scheduler at times stacks two ranks'
 * polling threads on one core while the other idles, and every exchange between them then waits for a thread
 * switch (measured at np 2 on 2 cores: a 4 B allreduce after a barrier 11-23 us unbound, 3-4 us bound).
 *
 * <p>A process's CPUs are those it may use when the worker starts (a container's CPU set, or {@code taskset}'s),
 * which every worker advertises ({@link WorkerInfo#cpus}). They are split only among the ranks of the host that were
 * given the same set: each of those {@code n} takes a contiguous {@code 1/n} of it, in order of local rank; ranks
 * that outnumber the CPUs share them in blocks. A rank whose set no other rank of the host has (each Guaranteed
 * container of a pod under the kubelet's static CPU manager gets CPUs of its own) keeps all of it, and so does a
 * generation with one rank on the host. Binding is a speed-up, never a condition: where it cannot be done the
 * worker runs unbound.
 */
final class CpuBinding {
    private static final Logger LOG = LoggerFactory.getLogger(CpuBinding.class);

    private final boolean enabled;
    /** Binding was asked for where affinity is not available (told once). */
    private boolean unavailable;
    /** The CPUs this process could use at start, ascending; empty where they cannot be read. */
    private final int[] hostCpus;
    /** The CPUs bound now, or null while the process runs where it started. */
    private int[] bound;
    private boolean failed;

    private CpuBinding(boolean enabled, int[] hostCpus) {
        this.enabled = enabled;
        this.hostCpus = hostCpus;
    }

    /** @param mode {@code KOLO_CPU_BIND}: {@code auto} or {@code off} */
    static CpuBinding of(String mode) {
        boolean asked = "auto".equals(mode);
        boolean enabled = asked && ThreadAffinity.isAvailable();
        CpuBinding b = new CpuBinding(enabled, enabled ? ThreadAffinity.allowedCpus() : new int[0]);
        b.unavailable = asked && !enabled;
        return b;
    }

    /** @return how many CPUs the host gives this process, whatever this rank is bound to now */
    int hostCpuCount() {
        return hostCpus.length > 0 ? hostCpus.length : Runtime.getRuntime().availableProcessors();
    }

    /** @return the CPUs this process was given, as the kernel lists them ({@code 0-3,6}), or empty when unknown */
    String cpuList() {
        return hostCpus.length > 0 ? ThreadAffinity.cpuList(hostCpus) : "";
    }

    /**
     * The ranks of {@code self}'s host that were given the same CPUs as {@code self} (a rank whose CPUs are unknown
     * is taken to share them, as ranks of one machine or pod do by default), in order of local rank.
     */
    static List<WorkerInfo> sharingCpus(WorkerInfo self, List<WorkerInfo> workers) {
        List<WorkerInfo> sharing = new java.util.ArrayList<>();
        for (WorkerInfo w : workers) {
            if (w.host().equals(self.host()) && (w.rank() == self.rank() || w.cpus().isEmpty()
                    || self.cpus().isEmpty() || w.cpus().equals(self.cpus()))) {
                sharing.add(w);
            }
        }
        sharing.sort(java.util.Comparator.comparingInt(WorkerInfo::localRank));
        return sharing;
    }

    /**
     * The CPUs of local rank {@code localRank} of {@code localSize}.
     *
     * @param cpus the host's CPUs, ascending
     */
    static int[] share(int[] cpus, int localRank, int localSize) {
        if (localSize <= 1) {
            return cpus.clone();
        }
        int n = cpus.length;
        if (localSize > n) {
            return new int[] {cpus[(int) ((long) localRank * n / localSize)]};
        }
        int from = (int) ((long) localRank * n / localSize);
        int to = (int) ((long) (localRank + 1) * n / localSize);
        return Arrays.copyOfRange(cpus, from, to);
    }

    /**
     * Binds the process to the share of {@code self}'s local rank if it is not bound to it already; with one rank
     * on the host, unbinds a process bound before. A process that runs several of the generation's workers (tests,
     * or an application that starts more than one) is left unbound: one process cannot take several shares.
     *
     * @param workers the generation's workers
     */
    synchronized void apply(WorkerInfo self, List<WorkerInfo> workers) {
        int rank = self.rank();
        List<WorkerInfo> sharing = sharingCpus(self, workers);
        int localRank = sharing.indexOf(self);
        int localSize = sharing.size();
        if (unavailable && localSize > 1) {
            unavailable = false;
            LOG.info("rank {} shares its CPUs with {} other rank(s) and runs unbound: binding to CPUs "
                    + "(KOLO_CPU_BIND=auto) needs Linux and Kolo's native library", rank, localSize - 1);
        }
        if (!enabled || failed || hostCpus.length < 2 || localRank < 0 || sharesProcess(self, workers)) {
            return;
        }
        int[] want = share(hostCpus, localRank, localSize);
        if (localSize <= 1 ? bound == null : Arrays.equals(want, bound)) {
            return;
        }
        try {
            ThreadAffinity.bindProcess(want);
            bound = localSize <= 1 ? null : want;
            LOG.info("rank {} ({} of the {} rank(s) of this host given CPUs {}) runs on CPU{} {} (KOLO_CPU_BIND)",
                    rank, localRank, localSize, ThreadAffinity.cpuList(hostCpus), want.length == 1 ? "" : "s",
                    ThreadAffinity.cpuList(want));
        } catch (RuntimeException e) {
            failed = true;
            LOG.warn("rank {} runs unbound: binding to CPUs {} failed ({}); KOLO_CPU_BIND=off skips the attempt",
                    rank, ThreadAffinity.cpuList(want), e.getMessage());
        }
    }

    private static boolean sharesProcess(WorkerInfo self, List<WorkerInfo> workers) {
        for (WorkerInfo w : workers) {
            if (w.rank() != self.rank() && w.pid() == self.pid() && w.host().equals(self.host())) {
                return true;
            }
        }
        return false;
    }
}
