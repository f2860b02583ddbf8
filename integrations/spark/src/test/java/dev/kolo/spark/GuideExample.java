package dev.kolo.spark;

import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;

/** The training of docs/spark.md, which copies its region; {@link LocalModeTest} runs it. */
final class GuideExample {
    private GuideExample() {
    }

    // example:train
    static double[] fitLine(SparkSession spark, Dataset<Row> points) {
        KoloDistributor distributor = KoloDistributor.builder(spark).numProcesses(2).build();
        return distributor.run(points, (kolo, rows) -> {
            List<double[]> mine = new ArrayList<>(); // this rank's partition, kept for every epoch
            rows.forEachRemaining(r -> mine.add(new double[] {r.getDouble(0), r.getDouble(1)}));
            double w = 0;
            double b = 0;
            for (int step = 0; step < 500; step++) {
                double dw = 0;
                double db = 0;
                for (double[] p : mine) {
                    double err = w * p[0] + b - p[1];
                    dw += err * p[0] / mine.size();
                    db += err / mine.size();
                }
                double[] g = kolo.allreduce("grad", Tensor.of(new double[] {dw, db}, 2), ReduceOp.AVERAGE)
                        .toDoubleArray(); // the same average on every rank: the ranks stay equal
                w -= g[0];
                b -= g[1];
                kolo.reportStep(step, mine.size());
            }
            return new double[] {w, b}; // rank 0's reaches the driver
        });
    }
    // example:end
}
