package dev.kolo.djl;

import ai.djl.nn.Block;
import dev.kolo.elastic.ElasticState;
import dev.kolo.runtime.Kolo;

/**
 * A DJL block's buffers (what DJL marks as running statistics, such as BatchNorm's running mean and variance) kept
 * equal on every rank, in the engine's own memory: for a training loop of your own around
 * {@link ModelParameters} and {@link dev.kolo.runtime.train.DistributedOptimizer} ({@link DistributedTrainer}
 * and {@link KoloTrainer} do this themselves). Broadcast them with the parameters at the start, average them at
 * every step, and register them with the {@link ElasticState}:
 *
 * <pre>{@code
 * ModelBuffers buffers = ModelBuffers.of(kolo, model.getBlock());
 * buffers.broadcast(0);
 * ... per step, after the backward pass:
 * buffers.startAverage();       // fuses with the gradients submitted at the same time
 * optimizer.step(lr);
 * buffers.awaitAverage();
 * }</pre>
 *
 * <p>Averaging at every step keeps the running mean equal to the running mean of the global batch's mean; the
 * running variance becomes the mean of the ranks' variances (without the spread between the ranks' means).
 * One training thread.
 */
public final class ModelBuffers {
    private final ModelExchange exchange;

    private ModelBuffers(ModelExchange exchange) {
        this.exchange = exchange;
    }

    /**
     * @param block an initialized block
     * @throws IllegalStateException if a parameter is not initialized
     */
    public static ModelBuffers of(Kolo kolo, Block block) {
        return new ModelBuffers(new ModelExchange(kolo, block));
    }

    /** Overwrites every buffer with rank {@code rootRank}'s values (on every rank, at the same point). */
    public void broadcast(int rootRank) {
        exchange.broadcastBuffers(rootRank);
    }

    /** Starts averaging every buffer over the ranks, in place; {@link #awaitAverage} waits for it. */
    public void startAverage() {
        exchange.submitBufferAverages();
    }

    /**
     * Waits for the average {@link #startAverage} started.
     *
     * @throws dev.kolo.runtime.KoloException if a collective fails or does not end within {@code KOLO_OP_TIMEOUT}
     */
    public void awaitAverage() {
        exchange.awaitPending();
    }

    /**
     * Abandons a started average (after another collective of the step failed): returns once none of its ops reads or
     * writes the engine's memory ({@link Kolo#abandon}); the next average waits for any still in flight.
     */
    public void dropAverage() {
        exchange.dropPending();
    }

    /**
     * Registers every buffer with {@code state} as the engine's own memory, so commits and checkpoints hold it
     * and a restore writes it back into the model.
     *
     * @throws IllegalStateException if the engine hands out copies of its arrays rather than views of them
     */
    public void register(ElasticState state) {
        exchange.register(state, false);
    }

    /** @return how many buffers the block has */
    public int count() {
        return exchange.buffers().length;
    }

    /** @return the buffers' values, concatenated in the block's order (a copy: for checksums and tests) */
    public float[] values() {
        int[] buffers = exchange.buffers();
        int total = 0;
        for (int i : buffers) {
            total += Math.toIntExact(exchange.parameters().get(i).getArray().size());
        }
        float[] out = new float[total];
        int at = 0;
        for (int i : buffers) {
            float[] v = exchange.parameters().get(i).getArray().toFloatArray();
            System.arraycopy(v, 0, out, at, v.length);
            at += v.length;
        }
        return out;
    }
}
