package dev.kolo.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.samples.netns.NetnsLab;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code worker.jar bench allreduce -np 2} as a user runs it, with its default warm-up and the rehearsal of the
 * small sizes' timing after it: a line per size, each with a time.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class BenchAllreduceIT {
    private static final Pattern LINE = Pattern.compile("\\{\"bench\":\"allreduce\",\"dtype\":\"float32\",\"np\":2,"
            + "\"bytes\":(\\d+),\"time_us\":([0-9.]+),.*");

    @Test
    void everySizeGetsATimeAfterTheDefaultWarmUp() throws Exception {
        try (WorkerProcess bench = WorkerProcess.start("bench", "allreduce", "-np", "2", "--max-bytes", "1024",
                "--no-fused-step", "--budget", "0.2", "--json")) {
            assertEquals(0, bench.exitCode(150), bench.transcript());
            List<String> lines = bench.lines(l -> l.startsWith("{\"bench\":\"allreduce\""));
            assertEquals(List.of(4L, 16L, 64L, 256L, 1024L), lines.stream().map(l -> {
                Matcher m = LINE.matcher(l);
                assertTrue(m.matches(), l);
                assertTrue(Double.parseDouble(m.group(2)) > 0, l);
                return Long.parseLong(m.group(1));
            }).toList(), bench.transcript());
        }
    }

    /** {@code --hosts 2}: the workers the bench starts in network namespaces get Kolo's JVM options too. */
    @Test
    void overTwoHostsNoWorkerWarnsAboutAccess() throws Exception {
        String why = NetnsLab.unavailable();
        Assumptions.assumeTrue(why == null, "bench over hosts skipped: " + why);
        try (WorkerProcess bench = WorkerProcess.start("bench", "allreduce", "-np", "2", "--hosts", "2",
                "--max-bytes", "64", "--no-fused-step", "--budget", "0.2", "--warmup", "1", "--json")) {
            assertEquals(0, bench.exitCode(150), bench.transcript());
            assertEquals(3, bench.lines(l -> l.startsWith("{\"bench\":\"allreduce\"")).size(), bench.transcript());
            assertEquals(List.of(), OwnProgramLaunchIT.accessWarnings(bench.err), bench.transcript());
        }
    }
}
