package dev.kolo.djl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.testing.ChildJvms;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An elastic job of two workers training a BatchNorm network with Kolo's Adam admits a third worker: from its
 * first step the newcomer's model (parameters and BatchNorm statistics, as the engine holds them) and Adam's
 * moments and step counts equal the others', and all three stay equal to the end.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class ElasticAdmissionTest {
    static final Pattern STATE = Pattern.compile("\\[(\\d)] state step=(\\d+) rank=(\\d) size=(\\d) model=(\\w+) "
            + "moments=(\\w+)");

    @Test
    void anAdmittedWorkerHoldsTheSameStatisticsAndMomentsAsTheOthers() throws Exception {
        String job = "djl-elastic-" + Integer.toHexString(new Random().nextInt());
        // A base of our own: the local discovery looks for members from it up, and other jobs may hold the default.
        String clusterPort = Integer.toString(12000 + 20 * new Random().nextInt(480));
        try (ChildJvms jvms = new ChildJvms()) {
            for (int i = 0; i < 3; i++) {
                if (i == 2) {
                    // The third worker comes once the job of two has trained a few steps.
                    jvms.await(0, 120, "step 3 of the first two", l -> l.contains("state step=3 "));
                }
                Map<String, String> env = new HashMap<>(Map.of("KOLO_JOB", job, "KOLO_NP", "2", "KOLO_MIN_NP", "2",
                        "KOLO_MAX_NP", "3", "KOLO_METRICS_PORT", "0", "KOLO_CLUSTER_PORT", clusterPort));
                jvms.start(ElasticDjlWorker.class, List.of("-Xmx384m", "-Dai.djl.offline=true",
                        "-Dai.djl.pytorch.num_threads=1", "-Dai.djl.pytorch.num_interop_threads=1"), env,
                        "400", "150", "11");
            }
            for (int i = 0; i < 3; i++) {
                assertEquals(0, jvms.waitExit(i, 240), "worker " + i + " failed\n" + jvms.tail(60));
            }
            Map<Integer, Map<Integer, String>> byStepAndProcess = new HashMap<>();
            int newcomerFirstStep = -1;
            for (String line : jvms.lines) {
                Matcher m = STATE.matcher(line);
                if (!m.find() || !m.group(4).equals("3")) {
                    continue;
                }
                int process = Integer.parseInt(m.group(1));
                int step = Integer.parseInt(m.group(2));
                if (process == 2 && newcomerFirstStep < 0) {
                    newcomerFirstStep = step;
                }
                byStepAndProcess.computeIfAbsent(step, k -> new HashMap<>())
                        .put(process, m.group(5) + "/" + m.group(6));
            }
            assertTrue(newcomerFirstStep > 3 && newcomerFirstStep < 400, "the third worker was admitted mid-run "
                    + "(first step at size 3: " + newcomerFirstStep + ")\n" + jvms.tail(40));
            for (var e : byStepAndProcess.entrySet()) {
                assertEquals(3, e.getValue().size(), "step " + e.getKey() + " at size 3 on every worker: " + e);
                assertEquals(1, e.getValue().values().stream().distinct().count(),
                        "model and moments equal on every worker after step " + e.getKey() + ": " + e.getValue());
            }
        }
    }
}
