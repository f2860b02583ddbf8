package dev.kolo.runtime;

import dev.kolo.runtime.internal.flight.FlightAnalysis;
import dev.kolo.runtime.internal.flight.FlightDumpFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/** Waits for the ranks' flight recorder files and analyses them, for the flight recorder's tests. */
final class FlightFiles {
    private FlightFiles() {
    }

    /**
     * Waits (at most {@code seconds}) until {@code dir} holds the file of each of {@code ranks}, written on
     * {@code trigger}; polls, as nothing signals a file written by another thread or process.
     *
     * @return the files, by rank
     */
    static List<FlightDumpFile> await(Path dir, List<Integer> ranks, String trigger, double seconds) {
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        List<FlightDumpFile> found = new ArrayList<>();
        while (true) {
            found.clear();
            for (int rank : ranks) {
                Path f = dir.resolve(FlightDumpFile.fileName(rank));
                if (Files.isRegularFile(f)) {
                    FlightDumpFile d = FlightDumpFile.read(f);
                    if (d.trigger().equals(trigger)) {
                        found.add(d);
                    }
                }
            }
            if (found.size() == ranks.size()) {
                return List.copyOf(found);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("ranks " + ranks + " did not all write a flight recorder file on " + trigger
                        + " within " + seconds + " s in " + dir + "; found " + found.stream()
                        .map(d -> d.rank() + ":" + d.trigger()).toList());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
    }

    /** @return the analyser's report of every file in {@code dir} */
    static List<String> analyse(Path dir) {
        return FlightAnalysis.analyse(FlightAnalysis.read(dir), FlightAnalysis.DEFAULT_STUCK_AFTER_MICROS);
    }
}
