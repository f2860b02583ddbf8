package dev.kolo.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The distributor on a real Spark standalone cluster: {@code local-cluster[2,1,1024]} runs a master and two
 * workers in this JVM, and each worker starts its executor as a JVM of its own, with this module's test class path
 * (the classes of Kolo, Vert.x, Hazelcast and Spark's own Netty, Jackson and logging as a user's executors have
 * them). One core per executor: each rank runs in its own executor JVM.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class StandaloneClusterTest {
    static SparkSession spark;

    @BeforeAll
    static void start() throws Exception {
        // The worker builds the executor's class path from SPARK_HOME's jars folder (set by the build) and the
        // class path given here.
        Files.createDirectories(Path.of(System.getenv("SPARK_HOME"), "jars"));
        spark = SparkSession.builder().master("local-cluster[2,1,1024]").appName("kolo-cluster-test")
                .config("spark.ui.enabled", "false")
                .config("spark.executor.extraClassPath", System.getProperty("java.class.path"))
                .config("spark.executor.extraJavaOptions", System.getProperty("kolo.jvm.opens", ""))
                .config("spark.kolo.rendezvous.timeout", "60")
                .getOrCreate();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (spark.sparkContext().statusTracker().getExecutorInfos().length < 3 && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100)); // the executors' JVMs register
        }
        assertEquals(3, spark.sparkContext().statusTracker().getExecutorInfos().length, "driver and two executors");
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    @Test
    void aRunGoesToTheEndWithEachRankInItsOwnExecutorJvm() {
        long driverPid = ProcessHandle.current().pid();
        Dataset<Row> df = spark.range(0, 1000).toDF("id");
        KoloDistributor d = KoloDistributor.builder(spark).numProcesses(2).build();
        long submitted = System.currentTimeMillis();
        double[] r = d.run(df, (kolo, rows) -> {
            long firstStep = System.currentTimeMillis(); // the same clock: one machine
            // A little "training": every rank moves its copy of a vector by the average of the ranks' rows.
            float[] w = new float[64];
            long seen = 0;
            while (rows.hasNext()) {
                long id = rows.next().getLong(0);
                seen++;
                float[] g = new float[64];
                g[(int) (id % 64)] = 1f;
                if (seen % 50 == 0) {
                    float[] avg = kolo.allreduce("g", Tensor.of(g, 64), ReduceOp.AVERAGE).toFloatArray();
                    for (int i = 0; i < 64; i++) {
                        w[i] -= 0.1f * avg[i];
                    }
                }
            }
            double sum = 0;
            for (int i = 0; i < 64; i++) {
                sum += w[i] * (i + 1);
            }
            double[] sums = kolo.allgather("checksum", Tensor.of(new double[] {sum}, 1)).toDoubleArray();
            double[] pids = kolo.allgather("pid", Tensor.of(new double[] {ProcessHandle.current().pid()}, 1))
                    .toDoubleArray();
            double[] seenAll = kolo.allreduce("seen", Tensor.of(new double[] {seen}, 1), ReduceOp.SUM)
                    .toDoubleArray();
            return new double[] {sums[0], sums[1], pids[0], pids[1], seenAll[0], kolo.size(), firstStep};
        });
        // Reported, not asserted: the stage's start (repartition's shuffle included) until rank 0 trains.
        System.out.println("kolo-spark: from run() to rank 0's first step " + ((long) r[6] - submitted) + " ms");
        assertEquals(2, (int) r[5]);
        assertEquals(1000, (long) r[4], "every row read once");
        assertEquals(r[0], r[1], "ranks end equal: " + Arrays.toString(r));
        assertNotEquals(r[2], r[3], "two executor JVMs");
        assertNotEquals((double) driverPid, r[2]);
        assertNotEquals((double) driverPid, r[3]);
    }

    @Test
    void theExecutorsRunKoloOnSparksNettyAndJackson() {
        KoloDistributor d = KoloDistributor.builder(spark).numProcesses(2).build();
        String versions = d.run(kolo -> {
            kolo.barrier();
            return io.netty.util.Version.identify().get("netty-common").artifactVersion() + " "
                    + com.fasterxml.jackson.databind.cfg.PackageVersion.VERSION;
        });
        assertEquals(System.getProperty("test.netty", "4.2.7.Final") + " " + System.getProperty("test.jackson",
                "2.20.0"), versions);
    }

    @Test
    void aRankThatThrowsReachesTheDriverNamingTheRankWithoutARetry(@TempDir Path dir) throws Exception {
        String attempts = dir.toString();
        KoloDistributor d = KoloDistributor.builder(spark).numProcesses(2).build();
        RankFailedException e = assertThrows(RankFailedException.class, () -> d.run(kolo -> {
            if (kolo.rank() == 1) {
                Files.createFile(Path.of(attempts, "attempt-" + org.apache.spark.BarrierTaskContext.get()
                        .stageAttemptNumber()));
                throw new IllegalStateException("broken on purpose");
            }
            kolo.barrier();
            return 0;
        }));
        assertEquals(1, e.rank(), e.getMessage());
        assertTrue(e.getMessage().contains("rank 1 of 2") && e.getMessage().contains("broken on purpose"),
                e.getMessage());
        try (var files = Files.list(dir)) {
            assertEquals(List.of("attempt-0"), files.map(p -> p.getFileName().toString()).toList(),
                    "the same function on the same input is not run again");
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS) // Spark's own check would wait 10 minutes
    void moreProcessesThanTheClusterHasSlotsFailsAtOnceSayingSo() {
        KoloDistributor d = KoloDistributor.builder(spark).numProcesses(3).slotWait(Duration.ofSeconds(1)).build();
        long start = System.nanoTime();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> d.run(kolo -> 0));
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - start);
        assertTrue(e.getMessage().contains("needs 3 task slots") && e.getMessage().contains("has 2")
                && e.getMessage().contains("2 executor(s)"), e.getMessage());
        assertTrue(seconds < 10, "failed after " + seconds + " s");
    }

    /** Last: it costs the cluster an executor, which the standalone master replaces. */
    @Test
    @Order(Integer.MAX_VALUE)
    void anExecutorKilledMidTrainingIsRunAgainAndTheJobResumesFromItsCheckpoint(@TempDir Path dir) throws Exception {
        Path pidFile = dir.resolve("rank1.pid");
        KoloDistributor d = KoloDistributor.builder(spark).numProcesses(2).build();
        java.util.concurrent.CompletableFuture<double[]> run = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> d.run(new ResumingTraining(dir.resolve("checkpoints").toString(), pidFile.toString())));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!Files.exists(pidFile) && !run.isDone() && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // rank 1 reaches step 20 and says so
        }
        assertTrue(Files.exists(pidFile), "rank 1 announced its executor: " + (run.isDone() ? run.join() : "-"));
        long pid = Long.parseLong(Files.readString(pidFile).trim());
        assertNotEquals(ProcessHandle.current().pid(), pid, "an executor JVM, not the driver's");
        ProcessHandle executor = ProcessHandle.of(pid).orElseThrow();
        assertTrue(executor.destroyForcibly(), "SIGKILL");
        double[] r = run.get(180, TimeUnit.SECONDS);
        assertTrue(r[1] >= 1, "the stage ran again: attempt " + r[1]);
        assertTrue(r[0] >= 5 && r[0] <= ResumingTraining.ANNOUNCE_AT, "resumed from a checkpoint of the first "
                + "attempt, not from the start: step " + r[0]);
        assertEquals(r[3], r[4], "ranks end equal");
        assertEquals(ResumingTraining.uninterrupted(), r[2], "as if nothing had happened");
    }
}
