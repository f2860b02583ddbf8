package dev.kolo.spark;

import dev.kolo.runtime.Kolo;
import java.io.Serializable;
import java.util.Iterator;

/**
 * The training run on every rank by {@link KoloDistributor#run(org.apache.spark.sql.Dataset, PartitionTrainFunction)},
 * with the rank's share of the data set: serializable, since Spark ships it to the executors.
 *
 * @param <T> the type of the data set's elements ({@code Row} for a DataFrame)
 * @param <R> what rank 0 returns to the driver (serializable too)
 */
@FunctionalInterface
public interface PartitionTrainFunction<T, R> extends Serializable {
    /**
     * Trains on one rank.
     *
     * @param kolo this rank's handle, closed by the distributor after this returns or throws
     * @param rows this rank's partition: the partition whose index is {@code kolo.rank()}, read once, in order
     *             (Spark streams it: collect it into memory to read it in several epochs)
     * @return the result; rank 0's reaches the driver
     * @throws Exception anything: the stage fails and the driver gets a {@link RankFailedException} naming this rank
     */
    R train(Kolo kolo, Iterator<T> rows) throws Exception;
}
