package dev.kolo.samples.mnist;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The training loop's gauges ({@code kolo_train_*}) in the worker's registry, so Prometheus and the Grafana
 * dashboard see the job's progress beside the runtime's meters. Values are kept as double bits in atomics:
 * the loop writes, the scraper reads.
 */
final class TrainingMetrics {
    private final AtomicLong step = new AtomicLong();
    private final AtomicLong epoch = new AtomicLong();
    private final AtomicLong loss = new AtomicLong(Double.doubleToLongBits(Double.NaN));
    private final AtomicLong samplesPerSecond = new AtomicLong(Double.doubleToLongBits(0));
    private final AtomicLong stepSeconds = new AtomicLong(Double.doubleToLongBits(Double.NaN));
    private final AtomicLong testAccuracy = new AtomicLong(Double.doubleToLongBits(Double.NaN));
    private final AtomicLong learningRate = new AtomicLong(Double.doubleToLongBits(Double.NaN));

    /** A registry keeps the first gauge of a name, so every Trainer on one worker shares that worker's gauges. */
    private static final java.util.Map<MeterRegistry, TrainingMetrics> BY_REGISTRY = new java.util.WeakHashMap<>();

    static synchronized TrainingMetrics of(MeterRegistry registry) {
        return BY_REGISTRY.computeIfAbsent(registry, TrainingMetrics::new);
    }

    private TrainingMetrics(MeterRegistry registry) {
        Gauge.builder("kolo.train.step", step, AtomicLong::get).description("Optimizer steps completed")
                .register(registry);
        Gauge.builder("kolo.train.epoch", epoch, AtomicLong::get).description("Current epoch (from 1)")
                .register(registry);
        gauge(registry, "kolo.train.loss", loss, "Mean training loss over the last logging interval");
        gauge(registry, "kolo.train.samples.per.second", samplesPerSecond,
                "Training samples per second over all workers, last logging interval");
        gauge(registry, "kolo.train.step.seconds", stepSeconds, "Mean time of one step, last logging interval");
        gauge(registry, "kolo.train.test.accuracy", testAccuracy, "Test-set accuracy after the last epoch");
        gauge(registry, "kolo.train.learning.rate", learningRate, "Learning rate of the last step");
    }

    private static void gauge(MeterRegistry registry, String name, AtomicLong bits, String description) {
        Gauge.builder(name, bits, b -> Double.longBitsToDouble(b.get())).description(description).register(registry);
    }

    /** One logging interval of {@code steps} steps that took {@code seconds} and saw {@code samples} samples. */
    void interval(long stepNow, long epochNow, double meanLoss, long steps, long samples, double seconds, double lr) {
        step.set(stepNow);
        epoch.set(epochNow);
        loss.set(Double.doubleToLongBits(meanLoss));
        double s = Math.max(seconds, 1e-9);
        samplesPerSecond.set(Double.doubleToLongBits(samples / s));
        stepSeconds.set(Double.doubleToLongBits(steps == 0 ? Double.NaN : seconds / steps));
        learningRate.set(Double.doubleToLongBits(lr));
    }

    void evaluated(double accuracy) {
        testAccuracy.set(Double.doubleToLongBits(accuracy));
    }
}
