package dev.kolo.runtime.internal.observability;

import dev.kolo.runtime.internal.control.OpType;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The meters of one process set's ops, tagged with the set's id ({@code kolo_process_set_latency_seconds},
 * {@code kolo_process_set_bytes_total}); the worker's collective meters count them too.
 */
final class ProcessSetMeters {
    private final MeterRegistry registry;
    private final String set;
    private final boolean enabled;
    private final Timer[] latency = new Timer[OpType.values().length];
    private final Counter[] bytes = new Counter[OpType.values().length];

    ProcessSetMeters(MeterRegistry registry, String set, boolean enabled) {
        this.registry = registry;
        this.set = set;
        this.enabled = enabled;
    }

    void record(OpType op, long nanos, long tensorBytes) {
        if (!enabled) {
            return;
        }
        Timer timer = latency[op.ordinal()];
        if (timer == null) {
            timer = register(op);
        }
        timer.record(nanos, TimeUnit.NANOSECONDS);
        bytes[op.ordinal()].increment(tensorBytes);
    }

    /** Registration is idempotent in the registry, so a race between two threads yields the same meters. */
    private synchronized Timer register(OpType op) {
        bytes[op.ordinal()] = Counter.builder("kolo.process_set.bytes")
                .description("Tensor bytes this rank contributed to the collectives of a process set")
                .tags("process_set", set, "op", op.label()).baseUnit("bytes").register(registry);
        Timer timer = Timer.builder("kolo.process_set.latency")
                .description("From submit to result of one collective of a process set, on this rank")
                .tags("process_set", set, "op", op.label())
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(20_000)).maximumExpectedValue(Duration.ofSeconds(60))
                .register(registry);
        latency[op.ordinal()] = timer;
        return timer;
    }
}
