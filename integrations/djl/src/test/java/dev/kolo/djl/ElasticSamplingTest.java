package dev.kolo.djl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.testing.ChildJvms;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Exactly once per epoch, whatever happens to the job: DJL's {@code EasyTrain} through {@link KoloTrainer#fit} with a
 * {@link DistributedSampler} and {@link KoloOptimizer}'s AdamW ({@link SampledTrainingWorker}), the indices recorded
 * where the trainer received its batches and the steps a regroup rolled back left out. An elastic job of 3 (at least
 * 2) loses a worker to SIGKILL mid-epoch and admits a new one later; a fixed job of 2 loses a worker, fails, and is
 * started again from its checkpoint mid-epoch. In both, each epoch trains every sample once (the padding of its last
 * step aside) and none twice; the restarted job ends with the parameters of a run that was never interrupted, bit
 * for bit.
 */
@Timeout(value = 420, unit = TimeUnit.SECONDS)
class ElasticSamplingTest {
    static final Pattern USED = Pattern.compile(
            "used run=(\\d+) gen=(\\d+) step=(\\d+) epoch=(\\d+) idx=([\\d,]+);");
    static final Pattern ENTER = Pattern.compile(
            "enter run=(\\d+) gen=(\\d+) rank=\\d+ size=(\\d+) step=(\\d+) epoch=(\\d+) taken=(\\d+)");
    static final Pattern DONE = Pattern.compile("done rank=\\d+ steps=(\\d+) checksum=(\\w+)");
    static final int BATCH = 8;

    @TempDir
    Path tmp;

    @Test
    void anElasticJobTrainsEverySampleOncePerEpochThroughAKillAndAnAdmission() throws Exception {
        int samples = 3000;
        Map<String, String> env = env("elastic", "3", "2", "3", null);
        try (ChildJvms jvms = new ChildJvms()) {
            for (int i = 0; i < 3; i++) {
                start(jvms, env, "0", samples, 2, "50");
            }
            jvms.await(0, 180, "step 25 of epoch 0", l -> l.contains(" step=25 epoch=0 "));
            jvms.signal(2, "KILL");
            String regrouped = jvms.await(0, 120, "the survivors' regroup", l -> l.contains("enter run=0 gen=")
                    && l.contains(" size=2 "));
            start(jvms, env, "0", samples, 2, "50");
            jvms.await(0, 180, "the newcomer's first entry", l -> l.startsWith("[3] enter ") && l.contains(" size=3 "));
            for (int i : new int[] {0, 1, 3}) {
                assertEquals(0, jvms.waitExit(i, 240), "worker " + i + " failed\n" + jvms.tail(40));
            }
            assertMidEpoch(regrouped, "the regroup after the kill");
            assertMidEpoch(jvms.await(0, 1, "the admission", l -> l.startsWith("[3] enter ")), "the admission");
            assertExactlyOncePerEpoch(jvms.lines, samples, 2);
        }
    }

    @Test
    void aFixedJobRestartedFromItsCheckpointGoesOnAtTheNextSampleAndEndsAsAnUninterruptedRun() throws Exception {
        int samples = 1200;
        String uninterrupted;
        try (ChildJvms jvms = new ChildJvms()) {
            Map<String, String> env = env("whole", "2", "2", "2", null);
            start(jvms, env, "0", samples, 2, "0");
            start(jvms, env, "0", samples, 2, "0");
            uninterrupted = checksums(jvms);
        }
        Path checkpoints = tmp.resolve("checkpoints");
        List<String> lines = new ArrayList<>();
        try (ChildJvms first = new ChildJvms()) {
            Map<String, String> env = env("fixed", "2", "2", "2", checkpoints);
            start(first, env, "0", samples, 2, "20");
            start(first, env, "0", samples, 2, "20");
            first.await(0, 180, "step 40 of epoch 0", l -> l.contains(" step=40 epoch=0 "));
            first.signal(1, "KILL");
            assertNotEquals(0, first.waitExit(0, 120), "a fixed job's survivor fails\n" + first.tail(20));
            lines.addAll(first.lines);
        }
        try (ChildJvms again = new ChildJvms()) {
            Map<String, String> env = env("fixed", "2", "2", "2", checkpoints);
            start(again, env, "1", samples, 2, "0");
            start(again, env, "1", samples, 2, "0");
            String resumed = checksums(again);
            String entered = again.await(0, 1, "the resumed entry", l -> l.contains("enter run=1 "));
            assertMidEpoch(entered, "the restart from the checkpoint");
            lines.addAll(again.lines);
            assertEquals(uninterrupted, resumed, "the resumed job's parameters equal an uninterrupted run's, bit "
                    + "for bit (weights, moments, update counts and position all came back)");
        }
        assertExactlyOncePerEpoch(lines, samples, 2);
    }

    Map<String, String> env(String name, String np, String min, String max, Path checkpoints) {
        Map<String, String> env = new HashMap<>(Map.of("KOLO_JOB", name + "-" + UUID.randomUUID().toString()
                .substring(0, 8), "KOLO_NP", np, "KOLO_MIN_NP", min, "KOLO_MAX_NP", max, "KOLO_METRICS_PORT", "0",
                "KOLO_CLUSTER_PORT", Integer.toString(12000 + 20 * new Random().nextInt(480))));
        if (checkpoints != null) {
            env.put("KOLO_CHECKPOINT_DIR", checkpoints.toString());
        }
        return env;
    }

    static void start(ChildJvms jvms, Map<String, String> env, String run, int samples, int epochs, String paceMs)
            throws Exception {
        jvms.start(SampledTrainingWorker.class, List.of("-Xmx384m", "-Dai.djl.offline=true",
                "-Dai.djl.pytorch.num_threads=1", "-Dai.djl.pytorch.num_interop_threads=1"), env, run,
                Integer.toString(samples), Integer.toString(epochs), Integer.toString(BATCH), "5", paceMs);
    }

    /** Waits for both workers of a job of two to end well; returns their (equal) checksum. */
    static String checksums(ChildJvms jvms) throws Exception {
        for (int i = 0; i < 2; i++) {
            assertEquals(0, jvms.waitExit(i, 240), "worker " + i + " failed\n" + jvms.tail(40));
        }
        List<String> sums = new ArrayList<>();
        for (String l : jvms.lines) {
            Matcher m = DONE.matcher(l);
            if (m.find()) {
                sums.add(m.group(2));
            }
        }
        assertEquals(2, sums.size(), jvms.tail(10));
        assertEquals(sums.get(0), sums.get(1), "ranks end equal");
        return sums.get(0);
    }

    static void assertMidEpoch(String enter, String what) {
        Matcher m = ENTER.matcher(enter);
        assertTrue(m.find(), enter);
        assertTrue(Long.parseLong(m.group(6)) > 0, what + " came inside an epoch: " + enter);
    }

    /**
     * The samples each epoch trained on, counting only the steps the final model keeps: a step recorded in an
     * earlier run or generation than an entry that restarted from before it was rolled back (and taken again).
     */
    static void assertExactlyOncePerEpoch(List<String> lines, int samples, int epochs) {
        List<long[]> entries = new ArrayList<>();
        List<Matcher> used = new ArrayList<>();
        for (String l : lines) {
            Matcher e = ENTER.matcher(l);
            if (e.find()) {
                entries.add(new long[] {Long.parseLong(e.group(1)), Long.parseLong(e.group(2)),
                        Long.parseLong(e.group(4))});
            }
            Matcher u = USED.matcher(l);
            if (u.find()) {
                used.add(u);
            }
        }
        // epoch -> step -> the indices of the step's kept batches, every rank's
        Map<Integer, TreeMap<Long, List<Integer>>> byEpoch = new TreeMap<>();
        int rolledBack = 0;
        for (Matcher u : used) {
            long run = Long.parseLong(u.group(1));
            long gen = Long.parseLong(u.group(2));
            long step = Long.parseLong(u.group(3));
            boolean kept = entries.stream().noneMatch(e -> (e[0] > run || e[0] == run && e[1] > gen) && e[2] < step);
            if (!kept) {
                rolledBack++;
                continue;
            }
            List<Integer> batch = byEpoch.computeIfAbsent(Integer.parseInt(u.group(4)), k -> new TreeMap<>())
                    .computeIfAbsent(step, k -> new ArrayList<>());
            for (String i : u.group(5).split(",")) {
                batch.add(Integer.parseInt(i));
            }
        }
        assertEquals(epochs, byEpoch.size(), "every epoch trained: " + byEpoch.keySet());
        for (Map.Entry<Integer, TreeMap<Long, List<Integer>>> e : byEpoch.entrySet()) {
            int[] count = new int[samples];
            long last = e.getValue().lastKey();
            for (Map.Entry<Long, List<Integer>> step : e.getValue().entrySet()) {
                for (int i : step.getValue()) {
                    count[i]++;
                    assertTrue(count[i] == 1 || step.getKey() == last, "epoch " + e.getKey() + ": sample " + i
                            + " trained twice, the second time at step " + step.getKey() + " (not the padded last)");
                }
            }
            for (int i = 0; i < samples; i++) {
                assertTrue(count[i] > 0, "epoch " + e.getKey() + ": sample " + i + " skipped");
            }
        }
        System.out.println("exactness: " + used.size() + " batches recorded, " + rolledBack + " rolled back");
    }
}
