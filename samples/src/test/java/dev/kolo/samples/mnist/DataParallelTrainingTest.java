package dev.kolo.samples.mnist;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.train.Compression;
import dev.kolo.runtime.train.LrScaling;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Trains on a slice of the real Fashion-MNIST (from the Debian package) with real jobs of one and three
 * workers in this JVM, formed once and shared by the cases.
 */
@Timeout(value = 150, unit = TimeUnit.SECONDS)
class DataParallelTrainingTest {
    private static final int TRAIN = 6000;
    private static final int TEST = 1000;
    private static FashionMnist data;
    private static List<Kolo> single;
    private static List<Kolo> three;

    @BeforeAll
    static void loadDataAndFormJobs() throws Exception {
        data = FashionMnist.load(FashionMnist.DEBIAN_DIR);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            Future<List<Kolo>> a = pool.submit(() -> form(1));
            Future<List<Kolo>> b = pool.submit(() -> form(3));
            single = a.get();
            three = b.get();
        } finally {
            pool.shutdownNow();
        }
    }

    @AfterAll
    static void leave() {
        for (List<Kolo> job : new List[] {single, three}) {
            if (job != null) {
                job.parallelStream().forEach(Kolo::close);
            }
        }
    }

    private static List<Kolo> form(int np) throws Exception {
        String job = "mnist-" + UUID.randomUUID().toString().substring(0, 8);
        int port = 12000 + 20 * (new Random().nextInt(480));
        ExecutorService pool = Executors.newFixedThreadPool(np);
        try {
            List<Future<Kolo>> f = new ArrayList<>();
            for (int i = 0; i < np; i++) {
                KoloConfig c = KoloConfig.builder().jobName(job).np(np).metricsPort(0).set(Settings.CLUSTER_PORT, port)
                        .rendezvousTimeout(Duration.ofSeconds(90)).build();
                f.add(pool.submit(() -> Kolo.init(c)));
            }
            List<Kolo> workers = new ArrayList<>();
            for (Future<Kolo> k : f) {
                workers.add(k.get());
            }
            workers.sort(java.util.Comparator.comparingInt(Kolo::rank));
            return workers;
        } finally {
            pool.shutdownNow();
        }
    }

    private static TrainSettings settings(int epochs, int batch, long maxSteps, Path checkpointDir) {
        return new TrainSettings(epochs, batch, 0.05, LrScaling.LINEAR, -1, true, Compression.NONE, 1, 42,
                maxSteps, 25, new int[] {128, 64}, 0.9, 0, TRAIN, TEST, checkpointDir, 30, 10, TrainSettings.MLP, 1, "sgd",
                dev.kolo.runtime.ReduceOp.AVERAGE, -1, 1);
    }

    /** One run on every worker of {@code job}, concurrently; rank 0's output goes into {@code log}. */
    private static List<TrainResult> train(List<Kolo> job, TrainSettings s, StringBuilder log) throws Exception {
        return train(job, s, log, k -> data, false);
    }

    private static List<TrainResult> train(List<Kolo> job, TrainSettings s, StringBuilder log,
            java.util.function.Function<Kolo, FashionMnist> dataOf, boolean partitioned) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(job.size());
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8)) {
            List<Callable<TrainResult>> runs = new ArrayList<>();
            for (Kolo k : job) {
                runs.add(() -> {
                    Trainer t = new Trainer(k, dataOf.apply(k), s, out, partitioned);
                    try (TrainingState state = new TrainingState(k, t.model(), t.rule(), t.sampler(), s,
                            TrainingJob.LEAVE_TIMEOUT)) {
                        return t.run(state);
                    }
                });
            }
            List<TrainResult> results = new ArrayList<>();
            for (Future<TrainResult> r : pool.invokeAll(runs, 140, TimeUnit.SECONDS)) {
                results.add(r.get());
            }
            return results;
        } finally {
            pool.shutdownNow();
            log.append(bytes.toString(StandardCharsets.UTF_8));
        }
    }

    private static void assertLearned(List<TrainResult> results, String log) {
        TrainResult r = results.get(0);
        assertTrue(r.lastLoss() < 0.7 * r.firstLoss(), "loss must fall: " + r + "\n" + log);
        assertTrue(r.testAccuracy() > 0.7, "accuracy far above chance (0.1): " + r + "\n" + log);
        for (TrainResult other : results) {
            assertEquals(r, other, "every rank ends with the same parameters and numbers");
        }
    }

    @Test
    void oneWorkerLearns() throws Exception {
        StringBuilder log = new StringBuilder();
        List<TrainResult> r = train(single, settings(2, 32, 0, null), log);
        assertLearned(r, log.toString());
        assertEquals(2 * (TRAIN / 32), r.get(0).steps(), log.toString());
    }

    @Test
    void threeWorkersLearnOnTheirShardsWithIdenticalParameters() throws Exception {
        StringBuilder log = new StringBuilder();
        List<TrainResult> r = train(three, settings(5, 32, 0, null), log);
        assertLearned(r, log.toString());
        assertEquals(5 * (TRAIN / 3 / 32), r.get(0).steps());
        assertTrue(log.toString().contains("epoch 5 done: test_accuracy="), log.toString());
        assertTrue(log.toString().matches("(?s).*epoch 1 step 25/62 samples/s \\d+ loss \\d\\.\\d{4} lr .*"),
                log.toString());
        String summary = TrainingJob.summary(2, 3, r.get(2));
        assertTrue(summary.matches("kolo: done rank=2 size=3 epochs=5 test_accuracy=0\\.\\d{4} checksum=[0-9a-f]{16}"),
                summary);
    }

    @Test
    void threeWorkersLearnEachOnItsOwnPartitionOfUnequalSize() throws Exception {
        // Rank r holds 1999 + r images of its own (as a Spark task holds its partition): all train on 1999.
        int[] from = {0, 1999, 1999 + 2000};
        StringBuilder log = new StringBuilder();
        List<TrainResult> r = train(three, settings(3, 32, 0, null), log, k -> {
            ImageSet all = data.train();
            int n = 1999 + k.rank();
            int px = all.pixels();
            byte[] images = java.util.Arrays.copyOfRange(all.images(), from[k.rank()] * px, (from[k.rank()] + n) * px);
            byte[] labels = java.util.Arrays.copyOfRange(all.labels(), from[k.rank()], from[k.rank()] + n);
            return new FashionMnist(new ImageSet(images, labels, n, px), data.test());
        }, true);
        assertLearned(r, log.toString());
        assertEquals(3 * (1999 / 32), r.get(0).steps(), "steps of the smallest partition\n" + log);
        assertTrue(log.toString().contains("train: 5997 examples, 1999 per rank"), log.toString());
    }

    /**
     * On one worker the reduction is exact, so a run resumed from a commit must end bit-identical to one that
     * never stopped: parameters, momentum, step and data order all restored. (With several workers the
     * ring's summation order depends on how gradients were fused, so two runs may differ in the last bits.)
     */
    @Test
    void resumingFromACheckpointEndsWhereAnUninterruptedRunEnds(@TempDir Path dir) throws Exception {
        StringBuilder log = new StringBuilder();
        TrainResult straight = train(single, settings(1, 32, 100, null), log).get(0);
        train(single, settings(1, 32, 60, dir), log);        // checkpoints at steps 30 and 60, then stops
        TrainResult resumed = train(single, settings(1, 32, 100, dir), log).get(0);
        assertTrue(log.toString().contains("train: resuming at step 60 (epoch 1, 1920 examples into it)"),
                log.toString());
        assertTrue(log.toString().contains("kolo: step=70 epoch=1 size=1 gen="), "the step counter continues\n" + log);
        assertEquals(100, resumed.steps());
        assertEquals(straight.checksum(), resumed.checksum(), "bit-identical parameters after resuming\n" + log);
        assertEquals(straight.testAccuracy(), resumed.testAccuracy());
    }
}
