package dev.kolo.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.checkpoint.CheckpointSettings;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.Tensor;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The distributor's corners in Spark's local mode, where the driver is the executor: this JVM runs every rank, so
 * its threads and ports after a run are the executor's.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class LocalModeTest {
    @TempDir
    static Path events;
    static SparkSession spark;

    @BeforeAll
    static void start() {
        spark = SparkSession.builder().master("local[2]").appName("kolo-local-test")
                .config("spark.ui.enabled", "false")
                .config("spark.eventLog.enabled", "true").config("spark.eventLog.dir", events.toUri().toString())
                .config("spark.eventLog.compress", "false") // read as text below
                .config("spark.kolo.rendezvous.timeout", "30")
                .config("spark.kolo.checkpoint.dir", "/tmp/kolo-spark-test-checkpoints")
                .getOrCreate();
    }

    @AfterAll
    static void stop() {
        if (spark != null) {
            spark.stop();
        }
    }

    @Test
    void returnsRankZerosResultAfterTheRanksReduceTogether() {
        KoloDistributor d = KoloDistributor.builder(spark).numProcesses(2).build();
        String result = d.run(kolo -> {
            float sum = kolo.allreduce("x", Tensor.of(new float[] {kolo.rank() + 1}), ReduceOp.SUM).toFloatArray()[0];
            return "rank=" + kolo.rank() + " size=" + kolo.size() + " sum=" + sum;
        });
        assertEquals("rank=0 size=2 sum=3.0", result);
    }

    @Test
    void eachRankReadsItsOwnPartitionOfTheDataset() {
        Dataset<Row> df = spark.range(0, 101).toDF("id");
        KoloDistributor d = KoloDistributor.builder(spark).numProcesses(2).build();
        long[] result = d.run(df, (kolo, rows) -> {
            long count = 0;
            long sum = 0;
            while (rows.hasNext()) {
                sum += rows.next().getLong(0);
                count++;
            }
            double[] total = kolo.allreduce("t", Tensor.of(new double[] {count, sum}, 2), ReduceOp.SUM).toDoubleArray();
            double[] counts = kolo.allgather("c", Tensor.of(new double[] {count}, 1)).toDoubleArray();
            return new long[] {(long) total[0], (long) total[1], (long) counts[0], (long) counts[1]};
        });
        assertEquals(101, result[0], "every row read once");
        assertEquals(5050, result[1], "every row read once: the ids add up");
        assertTrue(Math.abs(result[2] - result[3]) <= 1, "shares differ by a row at most: " + Arrays.toString(result));
    }

    @Test
    void theGuidesExampleFitsItsLine() {
        Dataset<Row> points = spark.range(0, 1000).selectExpr("cast(id as double) / 1000 as x",
                "3 * cast(id as double) / 1000 + 1 as y");
        double[] line = GuideExample.fitLine(spark, points);
        assertEquals(3, line[0], 1e-3, "slope");
        assertEquals(1, line[1], 1e-3, "intercept");
    }

    @Test
    void threadsAndPortsAreReleasedWhenTheStageEnds() throws Exception {
        // The JVM starts some threads once (JavaCPP's deallocator for the native kernels): a first run and a
        // barrier stage with Spark alone set the level; the run measured must not leave a thread above it. Spark's
        // own cached pools are not counted: they grow with its asynchronous clean-up of every job's broadcasts,
        // Kolo or not, and their threads idle out after 60 s.
        KoloDistributor d = KoloDistributor.builder(spark).numProcesses(2).build();
        d.run(kolo -> 0);
        spark.sparkContext().parallelize(scala.jdk.javaapi.CollectionConverters.asScala(List.<Object>of(1, 2))
                .toSeq(), 2, scala.reflect.ClassTag$.MODULE$.AnyRef()).barrier()
                .mapPartitions(new AllGatherOnly(), false, scala.reflect.ClassTag$.MODULE$.AnyRef()).collect();
        int before = threads().size();
        Set<String> namesBefore = threads();
        int port = d.run(kolo -> {
            kolo.barrier();
            return kolo.config().get(Settings.CLUSTER_PORT);
        });
        long ended = System.nanoTime();
        Set<String> atEnd = koloThreads();
        long deadline = ended + TimeUnit.SECONDS.toNanos(30);
        while ((threads().size() > before || !koloThreads().isEmpty()) && System.nanoTime() < deadline) {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // threads end after close: poll the count
        }
        Set<String> left = threads();
        left.removeAll(namesBefore);
        assertEquals(Set.of(), koloThreads(), "Kolo's, Hazelcast's and Vert.x's threads left after the stage");
        assertTrue(threads().size() <= before, "threads left after the stage: " + left);
        // Reported: what still ran when run() returned, and how long until the count was back.
        System.out.println("kolo-spark: " + atEnd.size() + " threads of Kolo when run() returned; all gone and the "
                + "count back to the level before after " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - ended)
                + " ms");
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(port)); // rank 0's cluster port is free again
        }
    }

    @Test
    void theJobSecretIsInNeitherTheConfNorTheEventLog() throws Exception {
        KoloDistributor d = KoloDistributor.builder(spark).numProcesses(2).build();
        String secret = d.run(kolo -> kolo.config().get(Settings.JOB_SECRET));
        assertTrue(secret != null && secret.length() >= 32, "the run had a secret");
        assertFalse(Arrays.stream(spark.sparkContext().getConf().getAll()).anyMatch(t -> t._2().contains(secret)));
        spark.sparkContext().listenerBus().waitUntilEmpty();
        List<String> logs = new ArrayList<>();
        try (Stream<Path> files = Files.walk(events)) {
            for (Path f : files.filter(Files::isRegularFile).toList()) {
                logs.add(Files.readString(f));
            }
        }
        assertFalse(logs.isEmpty() || logs.stream().allMatch(String::isEmpty), "the event log was written");
        assertTrue(logs.stream().anyMatch(l -> l.contains("SparkListenerStageCompleted")), "stages were logged");
        assertFalse(logs.stream().anyMatch(l -> l.contains(secret)), "the secret is in the event log");
    }

    @Test
    void aKoloSettingInTheSparkConfReachesTheRanks() {
        KoloDistributor d = KoloDistributor.builder(spark).numProcesses(2).build();
        String seen = d.run(kolo -> kolo.config().get(Settings.RENDEZVOUS_TIMEOUT).toSeconds() + " "
                + CheckpointSettings.CHECKPOINT_DIR.fromEnvironment().orElse(null));
        assertEquals("30 /tmp/kolo-spark-test-checkpoints", seen, "spark.kolo.rendezvous.timeout is "
                + "KOLO_RENDEZVOUS_TIMEOUT, spark.kolo.checkpoint.dir the checkpoint module's KOLO_CHECKPOINT_DIR");
        assertEquals(null, System.getProperty("kolo.checkpoint.dir"), "the executor's property is restored");
    }

    @Test
    void aBadKoloSettingFailsOnTheDriver() {
        try {
            // The SparkContext's conf is read: set on it, as a session's builder or spark-submit --conf does.
            spark.sparkContext().conf().set("spark.kolo.op.timeout", "soon");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> KoloDistributor.builder(spark).numProcesses(2).build());
            assertTrue(e.getMessage().contains("spark.kolo.op.timeout"), e.getMessage());
            spark.sparkContext().conf().remove("spark.kolo.op.timeout");
            spark.sparkContext().conf().set("spark.kolo.np", "3");
            e = assertThrows(IllegalArgumentException.class,
                    () -> KoloDistributor.builder(spark).numProcesses(2).build());
            assertTrue(e.getMessage().contains("numProcesses"), e.getMessage());
        } finally {
            spark.sparkContext().conf().remove("spark.kolo.op.timeout");
            spark.sparkContext().conf().remove("spark.kolo.np");
        }
    }

    @Test
    void aRankThatThrowsFailsTheRunNamingTheRank() {
        KoloDistributor d = KoloDistributor.builder(spark).numProcesses(2).build();
        RankFailedException e = assertThrows(RankFailedException.class, () -> d.run(kolo -> {
            if (kolo.rank() == 1) {
                throw new IllegalStateException("broken on purpose");
            }
            kolo.barrier(); // rank 0 waits for rank 1, which never comes
            return 0;
        }));
        assertEquals(1, e.rank(), e.getMessage());
        assertTrue(e.getMessage().contains("rank 1 of 2") && e.getMessage().contains("broken on purpose"),
                e.getMessage());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS) // Spark's own check retries for 10 minutes
    void moreProcessesThanSlotsFailsAtOnceSayingSo() {
        KoloDistributor d = KoloDistributor.builder(spark).numProcesses(3).slotWait(java.time.Duration.ofMillis(200))
                .build();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> d.run(kolo -> 0));
        assertTrue(e.getMessage().contains("numProcesses(3) needs 3 task slots") && e.getMessage().contains(
                "at most 2"), e.getMessage());
    }

    static final Pattern SPARK_POOLS = Pattern.compile("block-manager-|task-result-getter-|Executor task launch "
            + "worker");

    /** The threads of a Kolo worker: its own, its Hazelcast member's and its Vert.x instance's. */
    static Set<String> koloThreads() {
        return threads().stream().filter(n -> n.startsWith("kolo-") || n.startsWith("hz.")
                || n.startsWith("vert.x-")).collect(Collectors.toSet());
    }

    /** Every live thread but those of Spark's cached pools, as name#id. */
    static Set<String> threads() {
        return Arrays.stream(ManagementFactory.getThreadMXBean().dumpAllThreads(false, false))
                .filter(t -> !SPARK_POOLS.matcher(t.getThreadName()).lookingAt())
                .map(t -> t.getThreadName() + "#" + t.getThreadId()).collect(Collectors.toSet());
    }
}
