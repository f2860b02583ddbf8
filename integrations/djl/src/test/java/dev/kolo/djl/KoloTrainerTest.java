package dev.kolo.djl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.testing.ChildJvms;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * DJL's own training flow, distributed: {@code EasyTrain.fit} with DJL's Adam through a {@link KoloTrainer} on two
 * worker processes equals DJL's own trainer in one process over the global batch, the ranks are bitwise equal
 * before every batch and at the end (they start from different random weights, so this shows the broadcast too),
 * and the listeners that write files or log run on rank 0 only. A BatchNorm network whose trained layers change
 * between steps ({@link FreezeWorker}) keeps its statistics averaged, its frozen layers unsent and its ranks equal.
 */
@Timeout(value = 480, unit = TimeUnit.SECONDS)
class KoloTrainerTest {
    static final int STEPS = 3;
    static final int GLOBAL_BATCH = 16;

    @TempDir
    static Path tmp;
    static List<String> plainLines;
    static List<String> koloLines;

    static final int FREEZE_STEPS = 4;
    static Path freezeOut;

    @BeforeAll
    static void runBoth() throws Exception {
        plainLines = run("plain", 1, "plain");
        koloLines = run("np2", 2, "kolo");
        freezeOut = runFreezeWorkers();
    }

    /**
     * A BatchNorm network through {@link KoloTrainer}: after every step, each rank's running statistics are the
     * mean of what the two ranks' forward passes left (not one rank's values).
     */
    @Test
    void batchNormStatisticsAreTheRanksAverageAfterEveryStep() throws Exception {
        DistributedTrainerTest.assertStatisticsAreTheRanksAverage(freezeOut, "pre-", "post-", FREEZE_STEPS);
    }

    /**
     * A parameter frozen before training is not sent: rank 1 changed its frozen convolution after the broadcast,
     * and each rank keeps its own at every step (averaged as a buffer, both would hold the mean).
     */
    @Test
    void aFrozenParameterIsNotSent() throws Exception {
        float[] mine = DistributedTrainerTest.read(freezeOut.resolve("rank-0-conv-0.bin"));
        float[] theirs = DistributedTrainerTest.read(freezeOut.resolve("rank-1-conv-0.bin"));
        assertFalse(java.util.Arrays.equals(mine, theirs), "rank 1's frozen convolution was averaged with rank 0's");
        for (int s = 1; s < FREEZE_STEPS; s++) {
            assertArrayEquals(mine, DistributedTrainerTest.read(freezeOut.resolve("rank-0-conv-" + s + ".bin")),
                    "rank 0's frozen convolution changed at step " + s);
            assertArrayEquals(theirs, DistributedTrainerTest.read(freezeOut.resolve("rank-1-conv-" + s + ".bin")),
                    "rank 1's frozen convolution changed at step " + s);
        }
    }

    /**
     * Freezing and unfreezing between steps: the layer unfrozen halfway is trained from that step on with the
     * ranks' averaged gradients, the one frozen halfway stops; the ranks hold the same values throughout.
     */
    @Test
    void theTrainedSetMayChangeBetweenStepsAndTheRanksStayEqual() throws Exception {
        int half = FREEZE_STEPS / 2;
        float[][] first = new float[FREEZE_STEPS][];
        float[][] last = new float[FREEZE_STEPS][];
        for (int s = 0; s < FREEZE_STEPS; s++) {
            first[s] = DistributedTrainerTest.read(freezeOut.resolve("rank-0-first-" + s + ".bin"));
            last[s] = DistributedTrainerTest.read(freezeOut.resolve("rank-0-last-" + s + ".bin"));
            assertArrayEquals(first[s], DistributedTrainerTest.read(freezeOut.resolve("rank-1-first-" + s + ".bin")),
                    "the ranks' first linear layers differ after step " + s);
            assertArrayEquals(last[s], DistributedTrainerTest.read(freezeOut.resolve("rank-1-last-" + s + ".bin")),
                    "the ranks' last linear layers differ after step " + s);
        }
        for (int s = 1; s < FREEZE_STEPS; s++) {
            assertEquals(s >= half, !java.util.Arrays.equals(first[s - 1], first[s]),
                    "the first layer (unfrozen at step " + half + ") trained at step " + s);
            assertEquals(s < half, !java.util.Arrays.equals(last[s - 1], last[s]),
                    "the last layer (frozen at step " + half + ") trained at step " + s);
        }
    }

    static Path runFreezeWorkers() throws Exception {
        Path out = tmp.resolve("freeze");
        String job = "freeze-" + Integer.toHexString(new Random().nextInt());
        try (ChildJvms jvms = new ChildJvms()) {
            for (int r = 0; r < 2; r++) {
                Map<String, String> env = new HashMap<>(Map.of("KOLO_JOB", job, "KOLO_NP", "2",
                        "KOLO_RANK_HINT", Integer.toString(r), "KOLO_METRICS_PORT", "0"));
                jvms.start(FreezeWorker.class, List.of("-Xmx384m", "-Dai.djl.offline=true",
                        "-Dai.djl.pytorch.num_threads=1", "-Dai.djl.pytorch.num_interop_threads=1"), env,
                        out.toString(), Integer.toString(FREEZE_STEPS), Integer.toString(GLOBAL_BATCH));
            }
            for (int r = 0; r < 2; r++) {
                assertEquals(0, jvms.waitExit(r, 240), "freeze: rank " + r + " failed\n" + jvms.tail(60));
            }
        }
        return out;
    }

    @Test
    void easyTrainWithDjlsAdamAtNp2EqualsOneProcessOverTheGlobalBatch() throws Exception {
        for (String point : points()) {
            float[] expected = DistributedTrainerTest.read(tmp.resolve("plain").resolve("rank-0-" + point + ".bin"));
            float[] actual = DistributedTrainerTest.read(tmp.resolve("np2").resolve("rank-0-" + point + ".bin"));
            assertNear(expected, actual, 2e-5, point);
        }
        assertFalse(java.util.Arrays.equals(
                DistributedTrainerTest.read(tmp.resolve("plain").resolve("rank-0-before-0.bin")),
                DistributedTrainerTest.read(tmp.resolve("plain").resolve("rank-0-end.bin"))), "training moved");
    }

    @Test
    void ranksAreBitwiseEqualBeforeEveryBatchAndAtTheEnd() throws Exception {
        for (String point : points()) {
            assertArrayEquals(DistributedTrainerTest.read(tmp.resolve("np2").resolve("rank-0-" + point + ".bin")),
                    DistributedTrainerTest.read(tmp.resolve("np2").resolve("rank-1-" + point + ".bin")),
                    "rank 1 differs from rank 0 at " + point);
        }
    }

    @Test
    void listenersThatWriteRunOnRankZeroOnly() throws Exception {
        assertEquals(List.of("[0] model saved by rank 0"), matching(koloLines, "model saved by rank"),
                "SaveModelTrainingListener saves once, on rank 0");
        assertEquals(List.of("[0] rank-zero listener ran on rank 0"), matching(koloLines, "rank-zero listener"),
                "a listener wrapped in onRankZero");
        assertTrue(matching(koloLines, "LoggingTrainingListener").stream().allMatch(l -> l.startsWith("[0]"))
                && !matching(koloLines, "LoggingTrainingListener").isEmpty(),
                "DJL's logging listener logs on rank 0 only:\n" + String.join("\n", koloLines));
        try (Stream<Path> saved = Files.list(tmp.resolve("np2").resolve("model"))) {
            assertTrue(saved.anyMatch(p -> p.getFileName().toString().endsWith(".params")), "the model is saved");
        }
        assertEquals(2, matching(koloLines, "epochs in result 1").size(),
                "every rank's training result counts the epoch (the epoch listener runs everywhere)");
    }

    /**
     * With {@link KoloTrainer#gradientReduceOp} ADASUM, DJL's SGD steps by the Adasum of the ranks' own gradients,
     * tensor by tensor (the paper's formulation in double precision); the ranks end bitwise equal.
     */
    @Test
    void adasumStepsByTheAdasumOfTheRanksGradients() throws Exception {
        Path out = tmp.resolve("adasum");
        String job = "adasum-" + Integer.toHexString(new Random().nextInt());
        try (ChildJvms jvms = new ChildJvms()) {
            for (int r = 0; r < 2; r++) {
                Map<String, String> env = new HashMap<>(Map.of("KOLO_JOB", job, "KOLO_NP", "2",
                        "KOLO_RANK_HINT", Integer.toString(r), "KOLO_METRICS_PORT", "0"));
                jvms.start(AdasumStepWorker.class, List.of("-Xmx384m", "-Dai.djl.offline=true",
                        "-Dai.djl.pytorch.num_threads=1", "-Dai.djl.pytorch.num_interop_threads=1"), env,
                        out.toString(), "5");
            }
            for (int r = 0; r < 2; r++) {
                assertEquals(0, jvms.waitExit(r, 240), "rank " + r + " failed\n" + jvms.tail(60));
            }
        }
        int tensors = 0;
        for (int k = 0; Files.exists(out.resolve("rank-0-param-" + k + ".bin")); k++, tensors++) {
            float[] before = DistributedTrainerTest.read(out.resolve("rank-0-param-" + k + ".bin"));
            assertArrayEquals(before, DistributedTrainerTest.read(out.resolve("rank-1-param-" + k + ".bin")),
                    "both ranks start from rank 0's parameters");
            double[][] grads = new double[2][];
            for (int r = 0; r < 2; r++) {
                float[] g = DistributedTrainerTest.read(out.resolve("rank-" + r + "-grad-" + k + ".bin"));
                grads[r] = new double[g.length];
                for (int i = 0; i < g.length; i++) {
                    grads[r][i] = g[i];
                }
            }
            assertFalse(java.util.Arrays.equals(grads[0], grads[1]), "the shards give different gradients");
            double[] combined = dev.kolo.testing.AdasumReference.of(grads);
            float[] after = DistributedTrainerTest.read(out.resolve("rank-0-after-" + k + ".bin"));
            assertArrayEquals(after, DistributedTrainerTest.read(out.resolve("rank-1-after-" + k + ".bin")),
                    "the ranks agree bit for bit after the step");
            for (int i = 0; i < after.length; i++) {
                double expected = before[i] - AdasumStepWorker.LEARNING_RATE * combined[i];
                assertEquals(expected, after[i], 1e-5 * Math.max(1, Math.abs(expected)), "tensor " + k + " value " + i);
            }
        }
        assertTrue(tensors >= 4, "every trained parameter was checked: " + tensors);
    }

    static List<String> points() {
        List<String> points = new ArrayList<>();
        for (int b = 0; b < STEPS; b++) {
            points.add("before-" + b);
        }
        points.add("end");
        return points;
    }

    static List<String> matching(List<String> lines, String text) {
        return lines.stream().filter(l -> l.contains(text)).toList();
    }

    static void assertNear(float[] e, float[] a, double tolerance, String what) {
        assertEquals(e.length, a.length, what);
        for (int i = 0; i < e.length; i++) {
            double d = Math.abs(e[i] - a[i]) / Math.max(1, Math.abs(e[i]));
            assertTrue(d <= tolerance, what + ": value " + i + " is " + a[i] + ", expected " + e[i]
                    + " (relative difference " + d + " > " + tolerance + ")");
        }
    }

    static List<String> run(String name, int np, String mode) throws Exception {
        Path out = tmp.resolve(name);
        String job = "easy-" + name + "-" + Integer.toHexString(new Random().nextInt());
        try (ChildJvms jvms = new ChildJvms()) {
            for (int r = 0; r < np; r++) {
                Map<String, String> env = new HashMap<>(Map.of("KOLO_JOB", job, "KOLO_NP", Integer.toString(np),
                        "KOLO_RANK_HINT", Integer.toString(r), "KOLO_METRICS_PORT", "0"));
                jvms.start(EasyTrainWorker.class, List.of("-Xmx384m", "-Dai.djl.offline=true",
                        "-Dai.djl.pytorch.num_threads=1", "-Dai.djl.pytorch.num_interop_threads=1"), env,
                        out.toString(), Integer.toString(STEPS), Integer.toString(GLOBAL_BATCH), mode, "11");
            }
            for (int r = 0; r < np; r++) {
                assertEquals(0, jvms.waitExit(r, 240), name + ": rank " + r + " failed\n" + jvms.tail(60));
            }
            return List.copyOf(jvms.lines);
        }
    }
}
