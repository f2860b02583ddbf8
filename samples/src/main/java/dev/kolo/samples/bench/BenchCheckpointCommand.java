package dev.kolo.samples.bench;

import dev.kolo.samples.launch.JsonOption;
import dev.kolo.samples.launch.KoloVersion;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code bench checkpoint DIR}: checkpoint save and restore against plain file I/O of the same bytes. */
@Command(name = "checkpoint", description = "Checkpoint save and restore against plain file I/O on the same disk.",
        mixinStandardHelpOptions = true, versionProvider = KoloVersion.class, sortOptions = false)
public final class BenchCheckpointCommand implements Callable<Integer> {
    @Parameters(index = "0", paramLabel = "DIR", description = "A directory on the disk to measure (created if missing).")
    Path dir;

    @Option(names = "--bytes", paramLabel = "N", defaultValue = "268435456",
            description = "Bytes of state, in 16 float32 tensors (default: ${DEFAULT-VALUE}).")
    long bytes;

    @Option(names = "--reps", paramLabel = "R", defaultValue = "3",
            description = "Repetitions after one warm-up; medians are reported (default: ${DEFAULT-VALUE}).")
    int reps;

    @Mixin
    JsonOption output = new JsonOption();

    @Override
    public Integer call() throws IOException {
        if (bytes < 16 * 4 || reps < 1) {
            throw new IllegalArgumentException("--bytes must be at least 64 and --reps at least 1 (got " + bytes
                    + " and " + reps + ")");
        }
        Files.createDirectories(dir);
        CheckpointBenchmark.run(System.out, output.json(), dir, bytes, reps);
        return 0;
    }
}
