package dev.kolo.runtime.internal.observability;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.internal.control.OpType;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.core.instrument.config.MeterFilter;
import io.micrometer.core.instrument.distribution.pause.NoPauseDetector;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.prometheus.metrics.model.registry.PrometheusRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/**
 * One worker's meters, in its own Prometheus registry (several workers may share a JVM). Names follow
 * Prometheus conventions once rendered: {@code kolo.collective.latency} becomes
 * {@code kolo_collective_latency_seconds}. Tags are bounded: op and dtype, never tensor names.
 */
public final class KoloMetrics implements AutoCloseable {
    private final PrometheusMeterRegistry registry;
    private final JvmGcMetrics gc = new JvmGcMetrics();
    /** Indexed [op][dtype], created on first use: no key object per recorded op. */
    private final Timer[][] latency = new Timer[OpType.values().length][DType.values().length];
    private final Counter[][] bytes = new Counter[OpType.values().length][DType.values().length];
    /** Per transport, per op type (by ordinal). */
    private final Map<String, Counter[]> sent = new java.util.HashMap<>();
    private final Map<String, Counter[]> received = new java.util.HashMap<>();
    private final Timer negotiation;
    private final DistributionSummary fused;
    private final Counter cacheHits;
    private final Counter cacheMisses;
    private final Counter rounds;
    private final Counter roundMessages;
    private final Counter eager;
    private final Counter demoted;
    private final Counter resent;
    private final Counter copies;
    private final Map<String, Counter> dropped = new java.util.concurrent.ConcurrentHashMap<>();
    private final Counter stallWarnings;
    private final Counter resets;
    private final Counter lostWorkers;
    private final Counter mismatches;
    private final java.util.concurrent.atomic.LongAdder waitedNanos = new java.util.concurrent.atomic.LongAdder();
    private final AtomicLong ringSize = new AtomicLong();
    private final AtomicLong generation = new AtomicLong();
    private final AtomicLong ready = new AtomicLong();
    private final boolean enabled;
    /** This worker's rank once known, else -1; read by the tagging filter at each registration. */
    private volatile int rank = -1;
    private boolean jvmBound;

    /** @param enabled false records nothing on the hot path (the endpoint is off); the registry still exists */
    /** The tag naming the Kolo job on every meter. */
    public static final String JOB_TAG = "kolo_job";

    public KoloMetrics(String job, boolean enabled) {
        this.enabled = enabled;
        registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT, new PrometheusRegistry(), new MeterClock());
        // Micrometer's default pause detector reads the clock at every timer record (two per small op: 40 ns of
        // 700) and runs threads of its own, to add made-up samples after a pause of the JVM; the timers here publish
        // buckets of what happened only.
        registry.config().pauseDetector(new NoPauseDetector());
        // Not "job": Prometheus sets its own job label (the scrape job) and renames a target's to exported_job.
        registry.config().meterFilter(MeterFilter.commonTags(Tags.of(JOB_TAG, job)));
        // All filters before the first meter (Micrometer ignores later ones for existing meters and warns).
        registry.config().meterFilter(new MeterFilter() {
            @Override
            public Meter.Id map(Meter.Id id) {
                int r = rank;
                return r < 0 || id.getTag("rank") != null ? id : id.withTag(Tag.of("rank", Integer.toString(r)));
            }
        });
        negotiation = Timer.builder("kolo.negotiation.latency")
                .description("From submitting a tensor to every rank's agreement to run it, on this rank")
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(20_000)).maximumExpectedValue(Duration.ofSeconds(60))
                .register(registry);
        fused = DistributionSummary.builder("kolo.fusion.tensors")
                .description("Tensors reduced together in one fused allreduce").register(registry);
        cacheHits = Counter.builder("kolo.cache.hits")
                .description("Tensors agreed among the ranks by cache id, without the coordinator").register(registry);
        cacheMisses = Counter.builder("kolo.cache.misses")
                .description("Tensors sent to the coordinator with full metadata").register(registry);
        rounds = Counter.builder("kolo.negotiation.rounds")
                .description("Agreement rounds over the data plane this rank took part in").register(registry);
        roundMessages = Counter.builder("kolo.negotiation.round.messages")
                .description("Messages this rank sent in agreement rounds (log2 of the ranks per round, plus one "
                        + "or two when the ranks are not a power of two)").register(registry);
        eager = Counter.builder("kolo.negotiation.eager")
                .description("Small allreduces completed by an agreement round alone (their data travelled in it)")
                .register(registry);
        demoted = Counter.builder("kolo.negotiation.demoted")
                .description("Cached tensors the ranks sent on to the coordinator (a rank joined, the spec changed, "
                        + "or they waited too long)").register(registry);
        resent = Counter.builder("kolo.control.resent")
                .description("Requests a rank sent the coordinator again, unanswered for the resend interval")
                .register(registry);
        copies = Counter.builder("kolo.control.copies")
                .description("Re-sent requests the coordinator had counted already (answered by sending the rank "
                        + "the responses it lacks)").register(registry);
        stallWarnings = Counter.builder("kolo.stall.warnings")
                .description("Stall warnings logged by this worker while it coordinated").register(registry);
        resets = Counter.builder("kolo.resets").description("Generations after the first this worker joined")
                .register(registry);
        io.micrometer.core.instrument.FunctionCounter.builder("kolo.program.wait", waitedNanos, w -> w.sum() / 1e9)
                .baseUnit("seconds").description("Time the program's threads spent blocked waiting for collectives")
                .register(registry);
        lostWorkers = Counter.builder("kolo.workers.lost").description("Workers lost from this worker's generation")
                .register(registry);
        mismatches = Counter.builder("kolo.collective.errors").tag("kind", "mismatch")
                .description("Collectives failed by disagreeing ranks").register(registry);
        Gauge.builder("kolo.ring.size", ringSize, AtomicLong::get).description("Ranks in the current generation")
                .register(registry);
        Gauge.builder("kolo.generation", generation, AtomicLong::get).description("Current generation")
                .register(registry);
        Gauge.builder("kolo.ready", ready, AtomicLong::get)
                .description("1 while this worker is in a ring of the current generation").register(registry);
    }

    /**
     * Adds the rank as a tag of every meter registered from now on (it is known after rendezvous), then binds
     * the JVM and process meters: bound earlier, meters that appear later under the same name (a GC pause of
     * a new cause) would carry a tag set Prometheus refuses, and per-rank dashboards would lose them.
     */
    public void bindRank(int rank, String kernels, Supplier<Number> queueDepth) {
        this.rank = rank;
        if (!jvmBound) {
            jvmBound = true;
            new JvmMemoryMetrics().bindTo(registry);
            gc.bindTo(registry);
            new JvmThreadMetrics().bindTo(registry);
            new ClassLoaderMetrics().bindTo(registry);
            new ProcessorMetrics().bindTo(registry);
            new UptimeMetrics().bindTo(registry);
            new FileDescriptorMetrics().bindTo(registry);
        }
        Gauge.builder("kolo.queue.depth", queueDepth).description("Collectives submitted and not yet complete")
                .register(registry);
        Gauge.builder("kolo.kernels", () -> 1).tag("impl", kernels)
                .description("Reduction kernels in use (the impl tag says which)").register(registry);
    }

    public PrometheusMeterRegistry registry() {
        return registry;
    }

    boolean enabled() {
        return enabled;
    }

    public void collective(OpType op, DType dtype, long nanos, long tensorBytes) {
        if (!enabled) {
            return;
        }
        Timer timer = latency[op.ordinal()][dtype.ordinal()];
        if (timer == null) {
            timer = registerCollective(op, dtype);
        }
        timer.record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
        bytes[op.ordinal()][dtype.ordinal()].increment(tensorBytes);
    }

    /** Registration is idempotent in the registry, so a race between two threads yields the same meters. */
    private synchronized Timer registerCollective(OpType op, DType dtype) {
        String type = dtype.name().toLowerCase(java.util.Locale.ROOT);
        bytes[op.ordinal()][dtype.ordinal()] = Counter.builder("kolo.collective.bytes")
                .description("Tensor bytes this rank contributed to collectives")
                .tags("op", op.label(), "dtype", type).baseUnit("bytes").register(registry);
        // Buckets only: Prometheus takes p50 and p99 from them (histogram_quantile), across ranks too. Client-side
        // percentiles fed an HdrHistogram on every record: a sixth of a 4 B allreduce's time (docs/PERFORMANCE.md).
        Timer timer = Timer.builder("kolo.collective.latency")
                .description("From submit to result of one collective, on this rank")
                .tags("op", op.label(), "dtype", type)
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(20_000)).maximumExpectedValue(Duration.ofSeconds(60))
                .register(registry);
        latency[op.ordinal()][dtype.ordinal()] = timer; // published after its counter
        return timer;
    }

    /** @return the meters of process set {@code set}'s ops, registered as its ops first run */
    ProcessSetMeters processSetMeters(String set) {
        return new ProcessSetMeters(registry, set, enabled);
    }

    /** Time a program thread spent blocked waiting for one of its collectives (recorded when enabled or not). */
    public void waited(long nanos) {
        waitedNanos.add(nanos);
    }

    /** @return total time program threads have spent blocked waiting for collectives, in nanoseconds */
    public long waitedNanos() {
        return waitedNanos.sum();
    }

    /** @return bytes this rank has sent on the data plane (0 while the metrics are off) */
    public synchronized long bytesSent() {
        long total = 0;
        for (Counter[] byOp : sent.values()) {
            for (Counter c : byOp) {
                total += c == null ? 0 : (long) c.count();
            }
        }
        return total;
    }

    /**
     * Data-plane traffic of one op as its algorithm moves it (ring: 2(n-1)/n of the buffer each way), by the
     * transport its bytes took ({@code DataPlane.transport()}).
     */
    public synchronized void traffic(OpType op, String transport, long sentBytes, long receivedBytes) {
        if (!enabled) {
            return;
        }
        // Looked up, not computeIfAbsent: its lambda, capturing the registry, is an allocation per op.
        Counter[] out = sent.get(transport);
        if (out == null) {
            out = new Counter[OpType.values().length];
            sent.put(transport, out);
            received.put(transport, new Counter[OpType.values().length]);
        }
        Counter[] in = received.get(transport);
        int i = op.ordinal();
        if (out[i] == null) {
            out[i] = Counter.builder("kolo.dataplane.sent").baseUnit("bytes").tag("op", op.label())
                    .tag("transport", transport).description("Bytes this rank sent on the data plane")
                    .register(registry);
            in[i] = Counter.builder("kolo.dataplane.received").baseUnit("bytes").tag("op", op.label())
                    .tag("transport", transport).description("Bytes this rank received on the data plane")
                    .register(registry);
        }
        out[i].increment(sentBytes);
        in[i].increment(receivedBytes);
    }

    public void negotiated(long nanos) {
        if (!enabled) {
            return;
        }
        negotiation.record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    public void fused(int tensors) {
        if (!enabled) {
            return;
        }
        fused.record(tensors);
    }

    /** Always counted (a counter costs nanoseconds): tests and users see which path their tensors take. */
    public void cacheHit(boolean hit) {
        (hit ? cacheHits : cacheMisses).increment();
    }

    /** An agreement round in which this rank sent {@code messages} messages. */
    public void round(int messages) {
        rounds.increment();
        roundMessages.increment(messages);
    }

    public void eager() {
        eager.increment();
    }

    public void demoted() {
        demoted.increment();
    }

    public void resent() {
        resent.increment();
    }

    /** The coordinator received a copy of a request it had counted (not a drop: the copy asks for a resend). */
    public void copy() {
        copies.increment();
    }

    /** The coordinator dropped a control message (always counted: a drop must never go unnoticed). */
    public void dropped(String reason) {
        dropped.computeIfAbsent(reason, r -> Counter.builder("kolo.control.dropped").tag("reason", r)
                .description("Control messages the coordinator dropped").register(registry)).increment();
    }

    public void stallWarning() {
        stallWarnings.increment();
    }

    public void mismatch() {
        mismatches.increment();
    }

    public void generation(long gen, int size, boolean first) {
        generation.set(gen);
        ringSize.set(size);
        ready.set(1);
        if (!first) {
            resets.increment();
        }
    }

    public void aborted(boolean workerLost) {
        ready.set(0);
        if (workerLost) {
            lostWorkers.increment();
        }
    }

    @Override
    public void close() {
        gc.close();
        registry.close();
    }
}
