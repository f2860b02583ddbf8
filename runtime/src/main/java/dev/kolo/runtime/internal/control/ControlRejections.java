package dev.kolo.runtime.internal.control;

import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Control messages this node dropped because they were not authentic (or not control messages at all):
 * counted ({@code kolo_control_rejected_total{reason}}) and logged, at most one WARN per
 * {@value #INTERVAL_SECONDS} s so that a flood of forgeries cannot flood the log.
 */
public final class ControlRejections {
    private static final Logger LOG = LoggerFactory.getLogger(ControlRejections.class);
    static final long INTERVAL_SECONDS = 10;
    private static final long INTERVAL_NANOS = TimeUnit.SECONDS.toNanos(INTERVAL_SECONDS);

    private final MeterRegistry registry;
    private final AtomicLong total = new AtomicLong();
    private long lastLogged;
    private boolean loggedOnce;
    private long suppressed;

    /** @param registry where to count rejections, or null */
    public ControlRejections(MeterRegistry registry) {
        this.registry = registry;
    }

    /**
     * @param reason short fixed word for the metric (bounded set: never message contents)
     * @param detail what was dropped and why, for a person
     */
    public void reject(String reason, String detail) {
        total.incrementAndGet();
        if (registry != null) {
            registry.counter("kolo.control.rejected", "reason", reason).increment();
        }
        long now = System.nanoTime();
        long skipped;
        synchronized (this) {
            if (loggedOnce && now - lastLogged < INTERVAL_NANOS) {
                suppressed++;
                return;
            }
            loggedOnce = true;
            lastLogged = now;
            skipped = suppressed;
            suppressed = 0;
        }
        LOG.warn("control plane: dropped {}{}", detail,
                skipped == 0 ? "" : " (and " + skipped + " more in the last " + INTERVAL_SECONDS + " s)");
    }

    /** @return how many messages were dropped so far */
    public long total() {
        return total.get();
    }
}
