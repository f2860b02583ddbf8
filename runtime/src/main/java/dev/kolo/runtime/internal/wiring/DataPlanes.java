package dev.kolo.runtime.internal.wiring;

import dev.kolo.kernels.Kernels;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.internal.collectives.AllreduceAlgorithms;
import dev.kolo.runtime.internal.collectives.DataPlane;
import dev.kolo.runtime.internal.collectives.Hierarchy;
import dev.kolo.runtime.internal.collectives.KernelReducer;
import dev.kolo.runtime.internal.collectives.Reducer;
import dev.kolo.runtime.internal.collectives.SingleRankDataPlane;
import dev.kolo.runtime.internal.collectives.generation.GenerationDataPlane;
import dev.kolo.runtime.internal.control.ControlMessage;
import dev.kolo.runtime.internal.control.WorkerInfo;
import dev.kolo.runtime.internal.security.JobKeys;
import dev.kolo.runtime.internal.security.TlsMaterial;
import dev.kolo.runtime.internal.transport.connect.Endpoint;
import dev.kolo.runtime.internal.transport.connect.PeerAddress;
import dev.kolo.runtime.internal.transport.connect.TransportOptions;
import dev.kolo.runtime.internal.transport.shm.PeerCopy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This worker's data plane: the transport's endpoint started on the data port at startup, and per generation
 * either the fast path of a job of one or the collectives of a ring over the assignment's workers' links.
 */
public final class DataPlanes implements DataPlaneFactory, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DataPlanes.class);

    private final Kernels kernels;
    private final KernelReducer reducer;
    private final TransportOptions options;
    private final Endpoint transport;
    private final AllreduceAlgorithms algorithms;
    private final Hierarchy hierarchy;
    private final CpuBinding cpuBinding;
    private final Duration pollTime;

    /** @param tls this worker's TLS material, or null for plaintext data connections */
    public DataPlanes(KoloConfig config, DataPlaneListener listener, TlsMaterial tls) {
        this.kernels = Kernels.get();
        this.reducer = new KernelReducer(kernels);
        Duration progress = progressTimeout(config);
        JobKeys keys = JobKeys.of(config);
        this.options = TransportOptions.builder()
                .progressTimeout(progress)
                .connectTimeout(Duration.ofSeconds(20))
                .authenticationKey(keys == null ? null : keys.dataPlane())
                .tls(tls == null ? null : tls.context())
                .sharedMemory(config.get(Settings.SHM))
                .sharedMemoryBytes(config.get(Settings.SHM_BYTES))
                .peerCopy(new PeerCopy(kernels, PeerCopy.Mode.of(config.get(Settings.SHM_STREAM)),
                        config.get(Settings.SHM_STREAM_BYTES)))
                .build();
        this.algorithms = AllreduceAlgorithms.of(AllreduceAlgorithms.DIRECT_MAX_BYTES,
                AllreduceAlgorithms.DIRECT_MAX_RANKS, config.get(Settings.RECURSIVE_DOUBLING_MAX_BYTES), config.get(Settings.RABENSEIFNER_MAX_BYTES));
        this.hierarchy = Hierarchy.of(config.get(Settings.HIERARCHICAL));
        this.cpuBinding = CpuBinding.of(config.get(Settings.CPU_BIND));
        this.pollTime = config.get(Settings.POLL_TIME);
        this.transport = Endpoint.start(listener.channel(), config.get(Settings.JOB), options);
        LOG.info("data plane on port {} with {} kernels{}", listener.port(), kernels.name(), tls == null ? ""
                : ", TLS " + TlsMaterial.PROTOCOL);
    }

    /**
     * Longest a data-plane op may go without moving a byte: a hung peer is also caught by membership within the
     * heartbeat timeout; this bounds the data plane alone (2 x heartbeat timeout, at least 10 s).
     */
    public static Duration progressTimeout(KoloConfig config) {
        Duration twice = config.get(Settings.HEARTBEAT_TIMEOUT).multipliedBy(2);
        return twice.compareTo(MIN_PROGRESS_TIMEOUT) > 0 ? twice : MIN_PROGRESS_TIMEOUT;
    }

    private static final Duration MIN_PROGRESS_TIMEOUT = Duration.ofSeconds(10);

    @Override
    public DataPlane open(ControlMessage.Assignment assignment, WorkerInfo self, int channel) {
        if (channel == 0) { // a process set's ranks run in the processes the generation bound
            cpuBinding.apply(self, assignment.workers());
        }
        if (assignment.workers().size() == 1) {
            return new SingleRankDataPlane(reducer);
        }
        List<PeerAddress> peers = new ArrayList<>();
        for (WorkerInfo w : assignment.workers()) {
            peers.add(new PeerAddress(w.host(), w.dataPort()));
        }
        GenerationDataPlane ring = new GenerationDataPlane(transport.connect(assignment.generation(), channel, self.rank(), peers), reducer,
                options.chunkBytes(), algorithms, hierarchy);
        if (ring.hierarchicalAllreduce()) {
            LOG.info("data plane: generation {}{} rank {}: allreduces above {} bytes span its hosts hierarchically ({}: "
                    + "within each host, across hosts, within each host)", assignment.generation(),
                    channel == 0 ? "" : " process set " + channel, self.rank(),
                    algorithms.flatMaxBytes(),
                    hierarchy == Hierarchy.LEADERS ? "one rank per host carries the bytes across"
                            : "each rank carries its share across");
        }
        return ring;
    }

    /**
     * Binds this process to its share of the host's CPUs for {@code self}'s generation (see {@link CpuBinding}), at
     * once: {@link #open} does it again, to the same effect, when that generation's data plane opens.
     */
    public void bindCpus(ControlMessage.Assignment assignment, WorkerInfo self) {
        cpuBinding.apply(self, assignment.workers());
    }

    @Override
    public Duration pollTime() {
        return pollTime;
    }

    @Override
    public int hostCpus() {
        return cpuBinding.hostCpuCount();
    }

    @Override
    public int ranksSharingCpus(WorkerInfo self, java.util.List<WorkerInfo> workers) {
        return CpuBinding.sharingCpus(self, workers).size();
    }

    /** @return the CPUs this process was given, as the kernel lists them, or empty: what the worker advertises */
    public String cpuList() {
        return cpuBinding.cpuList();
    }

    /** @return the element-wise arithmetic the data plane uses, for reductions done outside it */
    public Reducer reducer() {
        return reducer;
    }

    /** @return "native" or "java": the kernels in use */
    public String kernelsName() {
        return kernels.name();
    }

    @Override
    public void close() {
        transport.close();
    }
}
