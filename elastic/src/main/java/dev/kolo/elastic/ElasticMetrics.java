package dev.kolo.elastic;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.util.concurrent.TimeUnit;

/**
 * The elastic module's meters on the worker's registry (served on {@code /metrics}):
 * {@code kolo_elastic_commits_total}, {@code kolo_elastic_commit_seconds} (the off-heap copy),
 * {@code kolo_elastic_rollbacks_total}, {@code kolo_elastic_recovery_seconds{reason}} (from the failure
 * surfacing to the state being synchronized in the new ring).
 */
final class ElasticMetrics {
    private final MeterRegistry registry;
    private final Counter commits;
    private final Timer commitTime;
    private final Counter rollbacks;

    ElasticMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.commits = Counter.builder("kolo.elastic.commits").description("commits of the elastic state")
                .register(registry);
        this.commitTime = Timer.builder("kolo.elastic.commit").description("time to copy the state off-heap")
                .register(registry);
        this.rollbacks = Counter.builder("kolo.elastic.rollbacks")
                .description("restores of the last commit after a lost worker").register(registry);
    }

    void committed(long nanos) {
        commits.increment();
        commitTime.record(nanos, TimeUnit.NANOSECONDS);
    }

    void rolledBack() {
        rollbacks.increment();
    }

    void recovered(ResetEvent.Reason reason, long nanos) {
        Timer.builder("kolo.elastic.recovery").description("failure or change to synchronized state in the new ring")
                .tag("reason", reason.name().toLowerCase(java.util.Locale.ROOT)).register(registry)
                .record(nanos, TimeUnit.NANOSECONDS);
    }
}
