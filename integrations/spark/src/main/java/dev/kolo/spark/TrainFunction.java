package dev.kolo.spark;

import dev.kolo.runtime.Kolo;
import java.io.Serializable;

/**
 * The training run on every rank by {@link KoloDistributor#run(TrainFunction)}: serializable, since Spark ships it
 * to the executors inside the stage's tasks.
 *
 * @param <R> what rank 0 returns to the driver (serializable too)
 */
@FunctionalInterface
public interface TrainFunction<R> extends Serializable {
    /**
     * Trains on one rank.
     *
     * @param kolo this rank's handle, joined with every other rank of the stage; closed by the distributor after
     *             this returns or throws
     * @return the result; rank 0's reaches the driver, the others' are dropped
     * @throws Exception anything: the stage fails and the driver gets a {@link RankFailedException} naming this rank
     */
    R train(Kolo kolo) throws Exception;
}
