package example;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.Tensor;
import dev.kolo.samples.mnist.TrainingJob;
import dev.kolo.spark.PartitionTrainFunction;
import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.Serializable;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.sql.Row;
import picocli.CommandLine;

/**
 * What each rank runs in its barrier task: the sample's training (worker.jar's, with the same flags) on the rank's
 * partition of the table. Rank 0 returns every rank's summary line and its own log (also printed live to its
 * executor's standard output) to the driver.
 *
 * @param trainingArgs the training flags ({@code --epochs} and the others of {@link TrainingJob.Options})
 * @param test         the whole test set, {images, labels}, which every rank evaluates its block of
 * @param checkpoints  where rank 0 checkpoints and a stage run again resumes from
 */
record RankTraining(String[] trainingArgs, byte[][] test, String checkpoints)
        implements PartitionTrainFunction<Row, RankTraining.Outcome> {
    private static final long serialVersionUID = 1L;
    /** Bytes a summary line may take on its way to rank 0 (its length is about 90). */
    private static final int LINE = 256;

    /**
     * @param log        rank 0's training log
     * @param summaries  every rank's {@code kolo: done ...} line, in rank order
     * @param startedAt  when rank 0 had its partition in memory and started training (epoch milliseconds)
     */
    record Outcome(String log, List<String> summaries, long startedAt) implements Serializable {
    }

    @Override
    public Outcome train(Kolo kolo, Iterator<Row> rows) {
        byte[][] mine = FashionMnistTable.toArrays(rows);
        long startedAt = System.currentTimeMillis();
        TrainingJob.Options options = new TrainingJob.Options();
        new CommandLine(options).parseArgs(trainingArgs);
        TrainingJob job = options.toJob(Path.of(checkpoints));
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(new Tee(System.out, log), true, StandardCharsets.UTF_8);
        String line = job.runPartitioned(kolo, out, mine[0], mine[1], test[0], test[1]);
        byte[] padded = Arrays.copyOf(line.getBytes(StandardCharsets.UTF_8), LINE);
        byte[] all = kolo.allgather("summary", Tensor.of(padded, LINE)).toByteArray();
        ArrayList<String> lines = new ArrayList<>();
        for (int r = 0; r < kolo.size(); r++) {
            String s = new String(all, r * LINE, LINE, StandardCharsets.UTF_8);
            lines.add(s.substring(0, s.indexOf('\0') < 0 ? LINE : s.indexOf('\0')));
        }
        out.flush();
        return new Outcome(log.toString(StandardCharsets.UTF_8), lines, startedAt);
    }

    /** Writes to both. */
    private static final class Tee extends OutputStream {
        private final OutputStream a;
        private final OutputStream b;

        Tee(OutputStream a, OutputStream b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public void write(int v) throws java.io.IOException {
            a.write(v);
            b.write(v);
        }

        @Override
        public void write(byte[] bytes, int off, int len) throws java.io.IOException {
            a.write(bytes, off, len);
            b.write(bytes, off, len);
        }

        @Override
        public void flush() throws java.io.IOException {
            a.flush();
            b.flush();
        }
    }
}
