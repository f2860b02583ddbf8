package dev.kolo.runtime.internal.autotune;

import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rank 0's tuner: takes the score of each sample the engine measures (bytes of collectives completed per second
 * of wall time, from the first round that ran a setting to the end of its {@link #SAMPLE_STEPS}th step, and at
 * least {@link #SAMPLE_NANOS}), logs it and says which setting to sample next; once every knob is raced it logs the choice and keeps
 * it. The engine decides when a sample ends and carries the values to the other ranks.
 */
public final class Autotuner implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Autotuner.class);
    /**
     * Fewest steps in a sample (a step ends whenever rank 0 has nothing in flight): enough that one slow step
     * moves a sample's score by a fifth at most, few enough that the search ends within about 200 steps.
     */
    public static final int SAMPLE_STEPS = 5;
    /**
     * Shortest sample: a job whose steps are short (or a loop of tiny collectives) still measures a quarter of a
     * second, over which the scheduler's noise on the 2-core machine evens out.
     */
    public static final long SAMPLE_NANOS = 250_000_000L;

    private final CoordinateSearch search;
    private final AutotuneLog log;
    private boolean announced;

    /** @param logFile where {@code KOLO_AUTOTUNE_LOG} says to write the samples, or null */
    public Autotuner(TunedValues start, Path logFile) {
        this.search = new CoordinateSearch(start);
        this.log = new AutotuneLog(logFile);
        LOG.info("autotune: starting from {}", start);
    }

    /** @return the setting to run now: the one being sampled, or the chosen one once done */
    public synchronized TunedValues current() {
        return search.current();
    }

    /** @return whether the search is over */
    public synchronized boolean done() {
        return search.done();
    }

    /**
     * A sample of {@code values} covered {@code bytes} of collectives in {@code nanos}.
     *
     * @param coordinated whether a coordinator response ran during it (else the cycle time had no part in it)
     * @return the setting to run next
     */
    public synchronized TunedValues sampled(TunedValues values, long bytes, long nanos, boolean coordinated) {
        if (search.done() || !values.equals(search.current())) {
            return search.current(); // not the setting asked for (a regroup started over): sample it anew
        }
        double seconds = nanos / 1e9;
        double score = bytes / Math.max(seconds, 1e-9);
        Knob knob = search.knob();
        String phase = search.warmingUp() ? "warmup" : knob.column.replace("_bytes", "").replace("_us", "");
        search.record(score, coordinated);
        log.row(search.samples(), phase, values, bytes, seconds, score);
        if (search.done() && !announced) {
            announced = true;
            LOG.info("autotune: done after {} samples; keeping {} (median {} MB/s){}", search.samples(), search.best(),
                    String.format(java.util.Locale.ROOT, "%.1f", search.median(search.best()) / 1e6),
                    search.cycleSkipped() ? "; the cycle time was kept: no tensor went through the coordinator "
                            + "after the warm-up, so it moved no step" : "");
            log.close();
        }
        return search.current();
    }

    @Override
    public synchronized void close() {
        log.close();
    }
}
