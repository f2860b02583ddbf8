package dev.kolo.runtime;

import dev.kolo.runtime.internal.flight.FlightAnalysis;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * The flight recorder's analyser, for tools such as {@code worker.jar flight analyse}: each rank keeps its last
 * collective ops ({@link Settings#FLIGHT_RECORDER}) and writes them to {@code flight-rank-R.json} in
 * {@link Settings#FLIGHT_DIR} on a stall, a failure, a signal, or when asked at {@link #PATH} on its metrics port; this
 * reads a directory of such files and says who is to blame.
 */
public final class FlightReport {
    /** Where a worker's metrics port writes its flight recorder file and answers with it. */
    public static final String PATH = "/status/flight";
    /** How long the ranks must have waited on an op others never submitted, when they were only asked for files. */
    public static final Duration DEFAULT_STUCK_AFTER = Duration.ofNanos(FlightAnalysis.DEFAULT_STUCK_AFTER_MICROS * 1000);

    private FlightReport() {
    }

    /**
     * Analyses every {@code flight-rank-R.json} in {@code dir}.
     *
     * @param stuckAfter how long an op must have waited to count as stuck in files written on request (files written
     *                   on a stall, failure or signal count at once)
     * @return the report: the verdict on its first line (a mismatched op, an op some ranks never submitted, a rank
     *         that left no file, or the straggler), then the detail per rank
     * @throws IllegalArgumentException if {@code dir} holds no such file or one is damaged, naming it
     */
    public static List<String> analyse(Path dir, Duration stuckAfter) {
        return FlightAnalysis.analyse(FlightAnalysis.read(dir), stuckAfter.toNanos() / 1000);
    }

    /** @return the file name rank {@code rank} writes */
    public static String fileName(int rank) {
        return "flight-rank-" + rank + ".json";
    }
}
