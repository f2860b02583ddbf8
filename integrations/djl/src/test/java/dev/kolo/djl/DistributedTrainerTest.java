package dev.kolo.djl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.testing.ChildJvms;
import java.io.DataInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * DJL's PyTorch engine trains a small CNN in worker processes: after every step the parameters are equal on
 * every rank and equal, within float rounding, to DJL's own training loop (its SGD, {@code Trainer.step()}, no
 * Kolo) in one process over the whole global batch; with two backward passes per step as well; with fp16
 * compression, equal on every rank and close to it. The ranks' models start from different random weights, so
 * equality also shows the broadcast.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
class DistributedTrainerTest {
    static final int STEPS = 3;
    static final int GLOBAL_BATCH = 16;

    @TempDir
    static Path tmp;
    /** DJL alone, one process over the global batch: what every data-parallel run must reproduce. */
    static Map<Integer, float[]> reference;

    @BeforeAll
    static void djlsOwnLoopOverTheGlobalBatch() throws Exception {
        reference = run("reference", 1, 1, "plain");
    }

    @Test
    void oneRankMatchesDjlsOwnLoop() throws Exception {
        assertNear(reference, run("np1", 1, 1, "none"), 2e-5, "np 1 against DJL's own loop");
    }

    /** Two ranks; with two backward passes per step; with fp16 gradients (equal on every rank, close to float32). */
    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "np2, 1, none, 2e-5, np 2 against one process",
        "np2-bpps2, 2, none, 2e-5, 'np 2, two passes per step, against one process'",
        "np2-fp16, 1, fp16, 5e-3, np 2 with fp16 gradients against one process in float32"})
    void twoRanksMatchOneProcessOverTheGlobalBatch(String name, int passesPerStep, String compression,
            double tolerance, String what) throws Exception {
        assertNear(reference, run(name, 2, passesPerStep, compression), tolerance, what);
    }

    /**
     * A fixed job checkpointing every step loses rank 1 after step 2 (it halts, as SIGKILL would end it); started
     * again on the same directory it resumes from the newest checkpoint and ends bitwise where an uninterrupted
     * run ends. Checkpoints are written asynchronously, so the newest complete one may be that of step 1.
     */
    @Test
    void aRestoreAfterAKillContinuesBitIdentically() throws Exception {
        int steps = 6;
        Map<Integer, float[]> whole = run("whole", 2, 1, "none", steps, tmp.resolve("ckpt-whole").toString(), "-1");
        Path dir = tmp.resolve("ckpt-killed");
        try (ChildJvms jvms = start("killed-first", 2, 1, "none", steps, dir.toString(), "2")) {
            assertEquals(137, jvms.waitExit(1, 240), jvms.tail(60));
            assertTrue(jvms.waitExit(0, 240) != 0, "rank 0 fails with its peer gone\n" + jvms.tail(60));
        }
        Map<Integer, float[]> resumed = run("killed", 2, 1, "none", steps, dir.toString(), "-1");
        assertTrue(resumed.keySet().stream().allMatch(s -> s >= 1) && !resumed.containsKey(0),
                "resumed from a checkpoint, not from the start: steps " + resumed.keySet());
        assertArrayEquals(whole.get(steps - 1), resumed.get(steps - 1), "the same parameters at the end");
    }

    /**
     * A network with BatchNorm: its running statistics (no gradient) are equal on every rank after every step
     * (they are averaged with the gradients; {@link #run} compares every array of the model), they change with
     * training, and they are in the checkpoint: after rank 1 is killed, the restarted job resumes with the
     * statistics the uninterrupted run had at that step and ends bitwise where it ends.
     */
    @Test
    void batchNormStatisticsStayEqualOnEveryRankAndAreRestoredAfterAKill() throws Exception {
        int steps = 5;
        List<String> wholeLines = new ArrayList<>();
        Map<Integer, float[]> whole = run("bn-whole", 2, 1, "none", steps, wholeLines,
                List.of("-Dkolo.test.network=batchnorm"), tmp.resolve("ckpt-bn-whole").toString(), "-1");
        List<String> buffers = wholeLines.stream().filter(l -> l.startsWith("[0] step "))
                .map(l -> l.substring(l.indexOf(" buffers ") + 9)).toList();
        assertEquals(steps, buffers.size(), String.join("\n", wholeLines));
        assertTrue(buffers.stream().distinct().count() == steps, "the statistics change every step: " + buffers);
        assertStatisticsAreTheRanksAverage(tmp.resolve("bn-whole"), "buffers-before-", "buffers-after-", steps);
        Path dir = tmp.resolve("ckpt-bn-killed");
        try (ChildJvms jvms = start("bn-killed-first", 2, 1, "none", steps,
                List.of("-Dkolo.test.network=batchnorm"), dir.toString(), "1")) {
            assertEquals(137, jvms.waitExit(1, 240), jvms.tail(60));
            assertTrue(jvms.waitExit(0, 240) != 0, "rank 0 fails with its peer gone\n" + jvms.tail(60));
        }
        List<String> resumedLines = new ArrayList<>();
        Map<Integer, float[]> resumed = run("bn-killed", 2, 1, "none", steps, resumedLines,
                List.of("-Dkolo.test.network=batchnorm"), dir.toString(), "-1");
        List<String> resumes = resumedLines.stream().filter(l -> l.contains("] resumed at step ")).toList();
        assertEquals(2, resumes.size(), "both ranks resume\n" + String.join("\n", resumedLines));
        for (String l : resumes) {
            // The checkpoint of step k holds the state after step k - 1 (checkpoints are written asynchronously, so
            // k is the newest one complete when rank 1 died).
            int k = Integer.parseInt(l.replaceAll(".*resumed at step (\\d+) .*", "$1"));
            assertTrue(k >= 1, l);
            assertTrue(l.endsWith(" buffers " + buffers.get(k - 1)), "restored statistics are those after step "
                    + (k - 1) + ": " + l + " (expected " + buffers.get(k - 1) + ")");
        }
        assertArrayEquals(whole.get(steps - 1), resumed.get(steps - 1), "the same model at the end");
    }

    /**
     * After every step, each rank's statistics are the mean of what the ranks' own forward passes left (each rank
     * sees other examples, so those differ): averaged, not one rank's broadcast. Two ranks.
     */
    static void assertStatisticsAreTheRanksAverage(Path out, String before, String after, int steps)
            throws IOException {
        for (int s = 0; s < steps; s++) {
            float[] mine = read(out.resolve("rank-0-" + before + s + ".bin"));
            float[] theirs = read(out.resolve("rank-1-" + before + s + ".bin"));
            assertTrue(mine.length > 0, "the network has statistics");
            assertTrue(!java.util.Arrays.equals(mine, theirs), "the ranks' own statistics differ at step " + s);
            for (int r = 0; r < 2; r++) {
                float[] averaged = read(out.resolve("rank-" + r + "-" + after + s + ".bin"));
                for (int i = 0; i < averaged.length; i++) {
                    float mean = (mine[i] + theirs[i]) / 2;
                    assertEquals(mean, averaged[i], 1e-6 * Math.max(1, Math.abs(mean)), "rank " + r + ", step " + s
                            + ", statistic " + i + ": not the mean of rank 0's " + mine[i] + " and rank 1's "
                            + theirs[i]);
                }
            }
        }
    }

    static Map<Integer, float[]> run(String name, int np, int passes, String compression) throws Exception {
        return run(name, np, passes, compression, STEPS);
    }

    /**
     * Runs the job and checks that every rank's parameters are bitwise equal after every step.
     *
     * @return rank 0's parameters per step
     */
    static Map<Integer, float[]> run(String name, int np, int passes, String compression, int steps,
                                     String... extra) throws Exception {
        return run(name, np, passes, compression, steps, new ArrayList<>(), List.of(), extra);
    }

    /** {@link #run}, keeping the processes' output lines in {@code lines}, with extra JVM flags. */
    static Map<Integer, float[]> run(String name, int np, int passes, String compression, int steps,
                                     List<String> lines, List<String> jvmFlags, String... extra) throws Exception {
        Path out = tmp.resolve(name);
        try (ChildJvms jvms = start(name, np, passes, compression, steps, jvmFlags, extra)) {
            for (int r = 0; r < np; r++) {
                assertEquals(0, jvms.waitExit(r, 240), name + ": rank " + r + " failed\n" + jvms.tail(60));
            }
            if (!compression.equals("plain")) {
                double meanRank = (np - 1) / 2.0;
                assertEquals(np, jvms.lines.stream().filter(l -> l.endsWith("] mean rank " + meanRank)).count(),
                        name + ": every rank logs the metric averaged over the ranks\n" + jvms.tail(20));
            }
            lines.addAll(jvms.lines);
            Map<Integer, float[]> rank0 = new HashMap<>();
            for (int s = 0; s < steps; s++) {
                Path file = out.resolve("rank-0-step-" + s + ".bin");
                if (!Files.exists(file)) {
                    continue; // before a resumed run's first step
                }
                float[] first = read(file);
                for (int r = 1; r < np; r++) {
                    assertArrayEquals(first, read(out.resolve("rank-" + r + "-step-" + s + ".bin")),
                            name + ": rank " + r + " differs from rank 0 after step " + s);
                }
                rank0.put(s, first);
            }
            return rank0;
        }
    }

    /** Starts the np worker processes of a job writing to {@code tmp/name}. */
    static ChildJvms start(String name, int np, int passes, String compression, int steps, String... extra)
            throws Exception {
        return start(name, np, passes, compression, steps, List.of(), extra);
    }

    static ChildJvms start(String name, int np, int passes, String compression, int steps, List<String> jvmFlags,
                           String... extra) throws Exception {
        Path out = tmp.resolve(name);
        // A fresh job name per start: a restarted job must not meet leftovers of the last.
        String job = "djl-" + name + "-" + Integer.toHexString(new Random().nextInt());
        ChildJvms jvms = new ChildJvms();
        for (int r = 0; r < np; r++) {
            Map<String, String> env = new HashMap<>(Map.of("KOLO_JOB", job, "KOLO_NP", Integer.toString(np),
                    "KOLO_RANK_HINT", Integer.toString(r), "KOLO_METRICS_PORT", "0"));
            List<String> args = new ArrayList<>(List.of(out.toString(), Integer.toString(steps),
                    Integer.toString(GLOBAL_BATCH), Integer.toString(passes), compression, "11"));
            args.addAll(List.of(extra));
            List<String> flags = new ArrayList<>(List.of("-Xmx384m", "-Dai.djl.offline=true",
                    "-Dai.djl.pytorch.num_threads=1", "-Dai.djl.pytorch.num_interop_threads=1"));
            flags.addAll(jvmFlags);
            jvms.start(DjlWorker.class, flags, env, args.toArray(new String[0]));
        }
        return jvms;
    }

    static void assertNear(Map<Integer, float[]> expected, Map<Integer, float[]> actual, double tolerance,
                           String what) {
        for (int s = 0; s < STEPS; s++) {
            float[] e = expected.get(s);
            float[] a = actual.get(s);
            assertEquals(e.length, a.length);
            double worst = 0;
            int at = -1;
            for (int i = 0; i < e.length; i++) {
                double d = Math.abs(e[i] - a[i]) / Math.max(1, Math.abs(e[i]));
                if (d > worst || Double.isNaN(d)) {
                    worst = d;
                    at = i;
                }
            }
            if (worst > tolerance || Double.isNaN(worst)) {
                throw new AssertionError(what + ", step " + s + ": parameter " + at + " is " + a[Math.max(0, at)]
                        + ", expected " + e[Math.max(0, at)] + " (relative difference " + worst + " > " + tolerance
                        + ")");
            }
        }
        // The training moved the parameters: the comparison is not between two untouched initialisations.
        assertTrue(!java.util.Arrays.equals(expected.get(0), expected.get(STEPS - 1)), "the parameters change");
    }

    static float[] read(Path file) throws IOException {
        List<Float> values = new ArrayList<>();
        try (DataInputStream in = new DataInputStream(Files.newInputStream(file))) {
            while (in.available() > 0) {
                values.add(in.readFloat());
            }
        }
        float[] out = new float[values.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = values.get(i);
        }
        return out;
    }
}
