package dev.kolo.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.testing.StatusJson;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The project a DJL user copies ({@code samples/djl-example}), run as its README says: its jar, built by the
 * reactor as a project of its own, started by {@code worker.jar launch -np 2} with no JVM option. Two real workers
 * train its BatchNorm network on the real Fashion-MNIST (the first images only, one epoch): each ends above chance
 * with the other's checksum, and the status page counted their steps while they trained.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class DjlExampleIT {
    static final Path JAR = Path.of("djl-example", "target", "fashion-mnist-djl.jar");
    static final Pattern DONE = Pattern.compile("\\[(\\d)] example: done rank=(\\d) size=2 steps=(\\d+) "
            + "test_accuracy=([\\d.]+) checksum=(\\w+)");
    static final Pattern PAGE = Pattern.compile("\\(this worker's: (http://\\S+/)\\)");

    @Test
    void twoWorkersTrainTheExampleAboveChanceEqualAndOnTheStatusPage() throws Exception {
        assertTrue(Files.isRegularFile(JAR), JAR.toAbsolutePath() + " is missing: the build makes it (samples/"
                + "djl-example is a module of the reactor, built before samples)");
        try (WorkerProcess launch = WorkerProcess.start("launch", "-np", "2", "--", "java", "-jar",
                JAR.toAbsolutePath().toString(), "--epochs", "1", "--limit", "12000")) {
            Matcher page = PAGE.matcher(launch.awaitLine(l -> l.startsWith("[0]") && PAGE.matcher(l).find(), 120));
            assertTrue(page.find());
            long step = -1;
            while (step < 1 && launch.process.isAlive()) {
                try {
                    step = StatusJson.get(page.group(1)).getLong("step", -1L);
                } catch (AssertionError closing) {
                    break; // the worker finished and closed its page between two looks
                }
                launch.process.waitFor(200, TimeUnit.MILLISECONDS);
            }
            assertTrue(step >= 1, "the status page showed the job's steps while it trained (last: " + step + ")\n"
                    + launch.transcript());
            assertEquals(0, launch.exitCode(240), launch.transcript());
            List<String> done = launch.lines(l -> DONE.matcher(l).find());
            assertEquals(2, done.size(), launch.transcript());
            String checksum = null;
            for (String line : done) {
                Matcher m = DONE.matcher(line);
                assertTrue(m.find());
                assertEquals(94, Integer.parseInt(m.group(3)), "12000 images, 64 per rank: 93.75 steps, the last "
                        + "padded: " + line);
                assertTrue(Double.parseDouble(m.group(4)) > 0.3, "above chance (0.1) after 94 steps: " + line);
                checksum = checksum == null ? m.group(5) : checksum;
                assertEquals(checksum, m.group(5), "ranks end with equal parameters");
            }
            assertTrue(launch.lines(l -> l.contains("without proper access") || l.contains("illegal reflective"))
                    .isEmpty(), "no JVM flag of the user's own was needed\n" + launch.transcript());
        }
    }
}
