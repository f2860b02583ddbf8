package dev.kolo.checkpoint.internal;

import dev.kolo.checkpoint.SaveResult;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;

/**
 * Save and restore meters of one checkpointer, registered in the worker's registry (e.g.
 * {@code kolo.meterRegistry()}) so they are served on its {@code /metrics}. Without a registry nothing is
 * recorded.
 */
public final class CheckpointMetrics {
    public static final CheckpointMetrics NONE = new CheckpointMetrics(null);

    private final Timer save;
    private final Timer saveBlocking;
    private final Counter saveBytes;
    private final Counter saveFailures;
    private final Timer restore;
    private final Counter restoreBytes;

    /** @param registry where the meters go; null records nothing */
    public CheckpointMetrics(MeterRegistry registry) {
        if (registry == null) {
            save = saveBlocking = restore = null;
            saveBytes = saveFailures = restoreBytes = null;
            return;
        }
        save = Timer.builder("kolo.checkpoint.save")
                .description("From save() to the checkpoint committed in every store").register(registry);
        saveBlocking = Timer.builder("kolo.checkpoint.save.blocking")
                .description("Time save() held the training thread (the staging copy)").register(registry);
        saveBytes = Counter.builder("kolo.checkpoint.save.bytes").baseUnit("bytes")
                .description("Tensor bytes committed by checkpoint saves").register(registry);
        saveFailures = Counter.builder("kolo.checkpoint.save.failures")
                .description("Checkpoint saves that failed in some store").register(registry);
        restore = Timer.builder("kolo.checkpoint.restore")
                .description("Time to read and verify a restored checkpoint").register(registry);
        restoreBytes = Counter.builder("kolo.checkpoint.restore.bytes").baseUnit("bytes")
                .description("Tensor bytes restored from checkpoints").register(registry);
    }

    public void saved(SaveResult r) {
        if (save != null && r.saved()) {
            save.record(r.total());
            saveBlocking.record(r.blocking());
            saveBytes.increment(r.bytes());
        }
    }

    public void saveFailed() {
        if (saveFailures != null) {
            saveFailures.increment();
        }
    }

    public void restored(Duration took, long bytes) {
        if (restore != null) {
            restore.record(took);
            restoreBytes.increment(bytes);
        }
    }
}
