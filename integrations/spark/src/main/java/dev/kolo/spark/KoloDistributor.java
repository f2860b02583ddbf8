package dev.kolo.spark;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloException;
import dev.kolo.spark.internal.BarrierTask;
import dev.kolo.spark.internal.ClusterSlots;
import dev.kolo.spark.internal.SparkSettings;
import dev.kolo.spark.internal.StageFailures;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.spark.SparkContext;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.SparkSession;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * Runs a Kolo training job inside one barrier-mode Spark stage, one task per rank, as PySpark's
 * {@code TorchDistributor} runs PyTorch's:
 *
 * <pre>{@code
 * KoloDistributor distributor = KoloDistributor.builder(spark).numProcesses(2).build();
 * double loss = distributor.run(kolo -> train(kolo));             // rank 0's result
 * long rows = distributor.run(df, (kolo, rows) -> train(kolo, rows)); // each rank its partition of df
 * }</pre>
 *
 * <p>Rank {@code r} is the stage's task (partition) {@code r}; the tasks exchange their addresses through the
 * stage ({@code BarrierTaskContext.allGather}) and form the job among themselves, so no discovery setting is
 * needed; the job secret is generated here for each run. Kolo's other settings come from the executors'
 * environment ({@code KOLO_*}) and, over it, from the Spark conf ({@code spark.kolo.op.timeout} is
 * {@code KOLO_OP_TIMEOUT}). Every rank's worker is closed when its task ends, failed or not.
 *
 * <p>A lost executor fails the stage, and Spark runs it again as a whole ({@code spark.stage.maxConsecutiveAttempts}
 * times at most): every rank starts anew, and a training that checkpoints ({@code spark.kolo.checkpoint.dir}, a
 * directory every executor reaches) resumes from its newest checkpoint. A rank whose function throws ends the run
 * at once, without a retry (the same input would fail the same way): {@code run} throws a
 * {@link RankFailedException} naming the rank.
 */
public final class KoloDistributor {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final SparkSession spark;
    private final int numProcesses;
    private final Duration slotWait;
    private final Map<String, String> settings;

    private KoloDistributor(Builder b) {
        this.spark = b.spark;
        this.numProcesses = b.numProcesses;
        this.slotWait = b.slotWait;
        Map<String, String> conf = Arrays.stream(spark.sparkContext().getConf().getAll())
                .filter(t -> t._1().startsWith(SparkSettings.PREFIX))
                .collect(Collectors.toMap(t -> t._1(), t -> t._2()));
        this.settings = SparkSettings.read(conf);
    }

    /**
     * @param spark the session whose cluster runs the ranks
     * @return a builder of a distributor of one process unless {@link Builder#numProcesses} says otherwise
     */
    public static Builder builder(SparkSession spark) {
        return new Builder(Objects.requireNonNull(spark, "spark"));
    }

    /** @return the number of ranks each run has */
    public int numProcesses() {
        return numProcesses;
    }

    /**
     * Runs {@code trainFn} on every rank and returns rank 0's result. A stage that fails otherwise than by a
     * rank's exception (an executor lost more often than Spark retries) ends with a {@link KoloException}
     * whose cause is Spark's {@code SparkException}.
     *
     * @throws IllegalArgumentException at once if the cluster has fewer task slots than ranks, saying so
     * @throws RankFailedException      if a rank's function threw (after Spark's retries), naming the rank
     */
    public <R> R run(TrainFunction<R> trainFn) {
        Objects.requireNonNull(trainFn, "trainFn");
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        List<Integer> ranks = IntStream.range(0, numProcesses).boxed().toList();
        RDD<Integer> rdd = jsc.parallelize(ranks, numProcesses).rdd();
        return runOn(rdd, new RanksOnly<>(trainFn));
    }

    /**
     * Runs {@code trainFn} on every rank, each with its share of {@code data}: the data set is repartitioned into
     * one partition per rank (round robin: shares differ by one row at most), rank {@code r} reads partition
     * {@code r}. Returns rank 0's result.
     *
     * @throws IllegalArgumentException at once if the cluster has fewer task slots than ranks, saying so
     * @throws RankFailedException      if a rank's function threw (after Spark's retries), naming the rank
     */
    public <T, R> R run(Dataset<T> data, PartitionTrainFunction<T, R> trainFn) {
        Objects.requireNonNull(data, "data");
        Objects.requireNonNull(trainFn, "trainFn");
        return runOn(data.repartition(numProcesses).rdd(), trainFn);
    }

    private <T, R> R runOn(RDD<T> rdd, PartitionTrainFunction<T, R> trainFn) {
        SparkContext sc = spark.sparkContext();
        ClusterSlots.require(sc, numProcesses, slotWait);
        byte[] secret = new byte[32];
        RANDOM.nextBytes(secret);
        byte[] id = new byte[6];
        RANDOM.nextBytes(id);
        String run = "spark-" + HexFormat.of().formatHex(id);
        BarrierTask<T, R> task = new BarrierTask<>(trainFn, numProcesses, run,
                Base64.getEncoder().encodeToString(secret), settings);
        @SuppressWarnings("unchecked")
        ClassTag<R> tag = (ClassTag<R>) ClassTag$.MODULE$.AnyRef();
        Object collected;
        String before = sc.getLocalProperty(StageFailures.RUN_PROPERTY);
        sc.setLocalProperty(StageFailures.RUN_PROPERTY, run);
        try (StageFailures failures = new StageFailures(sc, run, numProcesses)) {
            try {
                // A shuffle after the barrier stage makes it a map stage, which Spark runs again when an executor
                // is lost (spark.stage.maxConsecutiveAttempts), where a failed barrier result stage is final.
                collected = JavaRDD.fromRDD(rdd.barrier().mapPartitions(task, false, tag), tag).repartition(1)
                        .collect().toArray();
            } catch (Exception e) { // SparkException, checked in Java's eyes, which Scala code throws undeclared
                RankFailedException rank = rankThatFailed(failures);
                if (rank == null) {
                    throw new KoloException("the training stage failed: " + e.getMessage(), e);
                }
                rank.addSuppressed(e);
                throw rank;
            }
        } finally {
            sc.setLocalProperty(StageFailures.RUN_PROPERTY, before);
        }
        Object[] results = (Object[]) collected;
        if (results.length != 1) {
            throw new IllegalStateException("expected rank 0's result alone, got " + results.length);
        }
        @SuppressWarnings("unchecked")
        R r = (R) results[0];
        return r;
    }

    private static RankFailedException rankThatFailed(StageFailures failures) {
        try {
            // Spark kills the stage's other tasks within seconds of the failure; their ends are awaited.
            return failures.firstFailure(Duration.ofSeconds(30));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** {@link #run(TrainFunction)}'s function: the partition holds the rank's number only. */
    private record RanksOnly<R>(TrainFunction<R> fn) implements PartitionTrainFunction<Integer, R> {
        private static final long serialVersionUID = 1L;

        @Override
        public R train(Kolo kolo, Iterator<Integer> rows) throws Exception {
            return fn.train(kolo);
        }
    }

    /** Builds a {@link KoloDistributor}. */
    public static final class Builder {
        private final SparkSession spark;
        private int numProcesses = 1;
        private Duration slotWait = Duration.ofSeconds(10);

        private Builder(SparkSession spark) {
            this.spark = spark;
        }

        /**
         * @param n the number of ranks: one barrier task each, so the cluster needs {@code n} free task slots
         *          ({@code spark.task.cpus} cores each)
         */
        public Builder numProcesses(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("numProcesses must be at least 1 (got " + n + ")");
            }
            this.numProcesses = n;
            return this;
        }

        /**
         * @param wait how long a run waits for enough task slots (executors still registering) before it fails
         *             saying the cluster is too small; 10 s by default
         */
        public Builder slotWait(Duration wait) {
            this.slotWait = Objects.requireNonNull(wait, "wait");
            return this;
        }

        /**
         * @return the distributor
         * @throws IllegalArgumentException if a {@code spark.kolo.*} entry of the conf is not a Kolo setting, is one
         *                                  the distributor sets itself, or has a value it does not accept
         */
        public KoloDistributor build() {
            return new KoloDistributor(this);
        }
    }
}
