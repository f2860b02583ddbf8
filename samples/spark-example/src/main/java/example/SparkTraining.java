package example;

import dev.kolo.runtime.jvm.JvmOptions;
import dev.kolo.samples.mnist.TrainingJob;
import dev.kolo.spark.KoloDistributor;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Unmatched;

/**
 * The Spark driver: Fashion-MNIST into a Parquet table once, then the sample network trained on that table by
 * {@code -np} ranks, one barrier task each. Prints rank 0's training log and every rank's summary line
 * {@code kolo: done rank=R size=N epochs=E test_accuracy=A checksum=HEX}, as {@code worker.jar} does.
 */
@Command(name = "spark-example", mixinStandardHelpOptions = true, sortOptions = false,
        description = {"Trains Kolo's sample network on Fashion-MNIST from a Parquet table, in one barrier-mode "
                + "Spark stage.", "Every other option is a training flag of worker.jar (--epochs, --batch-size, "
                + "--lr, --data, ...: java -jar worker.jar help worker)."})
public final class SparkTraining implements Callable<Integer> {
    @Option(names = "--master", required = true, paramLabel = "MASTER",
            description = "Spark's master: local[N] (one JVM), spark://HOST:PORT (a standalone cluster), ...")
    String master;

    @Option(names = "-np", required = true, paramLabel = "N",
            description = "Ranks: one barrier task each, so the cluster needs N free task slots.")
    int np;

    @Option(names = "--table", paramLabel = "DIR",
            description = "Where the Parquet tables go (train/, test/); written once (default: "
                    + "${java.io.tmpdir}/kolo-fashion-mnist-parquet).")
    Path table = Path.of(System.getProperty("java.io.tmpdir"), "kolo-fashion-mnist-parquet");

    @Option(names = "--checkpoint-dir", paramLabel = "DIR",
            description = "Where rank 0 checkpoints, and a stage Spark runs again (a lost executor) resumes from; a "
                    + "folder every executor reaches (default: one of this application's own in ${java.io.tmpdir}).")
    Path checkpointDir;

    @Unmatched
    List<String> training = new ArrayList<>();

    /** Runs the program; exit status 0 when every rank finished. */
    public static void main(String[] args) {
        System.exit(new CommandLine(new SparkTraining()).execute(args));
    }

    @Override
    public Integer call() throws Exception {
        TrainingJob.Options options = new TrainingJob.Options();
        new CommandLine(options).parseArgs(training.toArray(String[]::new)); // bad flags fail here, not in a task
        TrainingJob job = options.toJob(null);
        try (SparkSession spark = session()) {
            Path trainTable = table.resolve("train");
            Path testTable = table.resolve("test");
            if (FashionMnistTable.writeOnce(spark, job.dataSet(true), trainTable)
                    | FashionMnistTable.writeOnce(spark, job.dataSet(false), testTable)) {
                System.out.println("spark: wrote Fashion-MNIST to " + table);
            }
            Dataset<Row> train = spark.read().parquet(trainTable.toString());
            byte[][] test = FashionMnistTable.collect(spark.read().parquet(testTable.toString()));
            Path checkpoints = checkpointDir != null ? checkpointDir
                    : Path.of(System.getProperty("java.io.tmpdir"), "kolo-spark-" + spark.sparkContext().applicationId());
            KoloDistributor distributor = KoloDistributor.builder(spark).numProcesses(np).build();
            long submitted = System.currentTimeMillis();
            RankTraining.Outcome outcome = distributor.run(train, new RankTraining(training.toArray(String[]::new),
                    test, checkpoints.toString()));
            long seconds = (System.currentTimeMillis() - submitted) / 1000;
            if (!master.startsWith("local")) {
                System.out.print(outcome.log()); // in one JVM it went to this output as it was written
            }
            System.out.printf(Locale.ROOT, "spark: the stage started training %d ms after it was submitted; %d s "
                    + "in all%n", outcome.startedAt() - submitted, seconds);
            outcome.summaries().forEach(System.out::println);
        }
        return 0;
    }

    /**
     * A session on {@link #master}. Off a single JVM, the executors take this program's classes from its jar (sent
     * by the driver) and Kolo's from {@code lib/} beside it, found at the same path on every machine.
     */
    private SparkSession session() {
        SparkSession.Builder b = SparkSession.builder().master(master).appName("kolo-fashion-mnist")
                .config("spark.ui.showConsoleProgress", "false");
        if (!master.startsWith("local")) {
            Path jar = ownJar();
            b.config("spark.jars", jar.toString())
                    .config("spark.executor.extraClassPath", jar.resolveSibling("lib") + "/*")
                    .config("spark.executor.extraJavaOptions", String.join(" ", JvmOptions.all()));
        }
        return b.getOrCreate();
    }

    private static Path ownJar() {
        try {
            Path p = Path.of(SparkTraining.class.getProtectionDomain().getCodeSource().getLocation().toURI());
            if (!Files.isRegularFile(p)) {
                throw new IllegalStateException("run the packaged jar (java -jar target/spark-example.jar): the "
                        + "executors need it, and " + p + " is a folder");
            }
            return p;
        } catch (java.net.URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
