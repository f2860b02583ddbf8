package dev.kolo.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import ai.djl.util.Pair;
import dev.kolo.elastic.ElasticState;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.KoloInterruptedException;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The collectives that keep a block's engine arrays equal on every rank, run on the arrays' own memory: the
 * broadcast of every parameter and buffer at the start, and per step the average of every trained parameter's
 * gradient and of every buffer. Buffers are what DJL marks as such: parameters of type
 * {@link Parameter.Type#RUNNING_MEAN} or {@link Parameter.Type#RUNNING_VAR} (BatchNorm's running statistics).
 * A trained parameter is any other one that requires a gradient at the step: which ones do is read again at
 * every step, so a parameter frozen ({@code Block.freezeParameters}) is not sent from the next step on, and one
 * unfrozen is averaged from its first step (it stayed equal on every rank while frozen, as nothing updated it).
 * Gradients are submitted last layer first (the order a backward pass completes them in) and the buffers with
 * them, so that the runtime fuses them into few ring operations.
 *
 * <p>A step whose exchange fails lets go of every op first: the one whose wait failed is let go of by that wait,
 * the others are {@link Kolo#abandon abandoned}, so none writes into the engine's memory after the step threw
 * (the gradient arrays are closed then). Ops still in flight keep their names; the next step waits for each
 * before it submits the name again.
 */
final class ModelExchange {
    private static final Logger LOG = LoggerFactory.getLogger(ModelExchange.class);
    private final Kolo kolo;
    /** Every parameter of the block and its name, in the block's order. */
    private final List<String> names = new ArrayList<>();
    private final List<Parameter> parameters = new ArrayList<>();
    /** Indexes of the buffers among {@link #parameters}. */
    private final int[] buffers;
    /** Indexes of the parameters trained at the last step, in the block's order: the first {@link #trainedCount}. */
    private final int[] trained;
    private int trainedCount;
    /** Per parameter, whether it was trained at the last step (false for buffers). */
    private final boolean[] trains;
    private final EngineTensor[] views;
    private final NDArray[] gradients;
    /** The ops of the exchange in progress, and the parameter each belongs to. */
    private final List<CompletableFuture<Tensor>> pending;
    private final int[] pendingIndex;
    /** Per parameter, an op of a failed exchange that may still be in flight under its name. */
    private final List<CompletableFuture<Tensor>> leftovers;
    /** How gradients combine over the ranks (buffers are always averaged). */
    private ReduceOp gradientOp = ReduceOp.AVERAGE;

    /** @param block an initialized block */
    ModelExchange(Kolo kolo, Block block) {
        EngineHeap.tuneOnce();
        this.kolo = kolo;
        int bufferCount = 0;
        for (Pair<String, Parameter> named : block.getParameters()) {
            if (!named.getValue().isInitialized()) {
                throw new IllegalStateException("parameter '" + named.getKey() + "' is not initialized: initialize "
                        + "the model (trainer.initialize(inputShape)) before training it with Kolo");
            }
            names.add(named.getKey());
            parameters.add(named.getValue());
            bufferCount += isBuffer(named.getValue()) ? 1 : 0;
        }
        int n = parameters.size();
        this.buffers = new int[bufferCount];
        for (int i = 0, b = 0; i < n; i++) {
            if (isBuffer(parameters.get(i))) {
                buffers[b++] = i;
            }
        }
        this.trained = new int[n];
        this.trains = new boolean[n];
        this.views = new EngineTensor[n];
        for (int i = 0; i < n; i++) {
            views[i] = new EngineTensor();
        }
        this.gradients = new NDArray[n];
        this.pending = new ArrayList<>(n);
        this.pendingIndex = new int[n];
        this.leftovers = new ArrayList<>(java.util.Collections.nCopies(n, null));
        refreshTrained();
    }

    /** DJL's buffers: running statistics, which the forward pass updates and no gradient touches. */
    static boolean isBuffer(Parameter p) {
        return p.getType() == Parameter.Type.RUNNING_MEAN || p.getType() == Parameter.Type.RUNNING_VAR;
    }

    /**
     * Reads which parameters require a gradient now, and rebuilds the trained set if it changed since the last
     * step (allocates nothing when it did not).
     */
    private void refreshTrained() {
        boolean changed = false;
        for (int i = 0; i < parameters.size(); i++) {
            boolean now = !isBuffer(parameters.get(i)) && parameters.get(i).requiresGradient();
            if (now != trains[i]) {
                trains[i] = now;
                changed = true;
            }
        }
        if (!changed) {
            return;
        }
        trainedCount = 0;
        for (int i = 0; i < parameters.size(); i++) {
            if (trains[i]) {
                trained[trainedCount++] = i;
            }
        }
        LOG.debug("{} of the block's {} parameters are trained from this step on ({} buffers)", trainedCount,
                parameters.size(), buffers.length);
    }

    /** Overwrites every parameter and buffer with rank {@code root}'s values. */
    void broadcast(int root) {
        broadcast(root, false);
    }

    /** Overwrites every buffer (not the trained parameters) with rank {@code root}'s values. */
    void broadcastBuffers(int root) {
        broadcast(root, true);
    }

    private void broadcast(int root, boolean buffersOnly) {
        pending.clear();
        try {
            for (int i = 0; i < parameters.size(); i++) {
                if (!buffersOnly || isBuffer(parameters.get(i))) {
                    submitOp(i, kolo.broadcastAsync("djl.value." + names.get(i),
                            open(i, parameters.get(i).getArray()), root));
                }
            }
        } catch (RuntimeException e) {
            dropPending();
            throw e;
        }
        awaitPending(true);
    }

    /** Sets how gradients combine over the ranks: AVERAGE (the default), SUM or ADASUM. */
    void gradientOp(ReduceOp op) {
        this.gradientOp = op;
    }

    /**
     * Replaces every trained parameter's gradient by its average over the ranks (or what {@link #gradientOp}
     * says) and every buffer by its average, in place. Runs before the optimizer's update; the arrays' memory is
     * read and written while the caller waits, and not after this returns or throws.
     */
    void averageGradientsAndBuffers() {
        pending.clear();
        try {
            refreshTrained();
            for (int k = trainedCount - 1; k >= 0; k--) {
                int i = trained[k];
                gradients[i] = parameters.get(i).getArray().getGradient();
                submit(i, gradients[i], "djl.grad.", gradientOp);
            }
        } catch (RuntimeException e) {
            dropPending();
            throw e;
        }
        submitBufferAverages();
        awaitPending();
    }

    /**
     * Starts averaging every buffer over the ranks, in place; {@link #awaitPending} waits for it. Starting it
     * before waiting for other collectives lets the runtime fuse the buffers with them.
     */
    void submitBufferAverages() {
        try {
            for (int i : buffers) {
                submit(i, parameters.get(i).getArray(), "djl.buffer.", ReduceOp.AVERAGE);
            }
        } catch (RuntimeException e) {
            dropPending();
            throw e;
        }
    }

    /** Waits for every collective submitted since the last wait and writes back results held in copies. */
    void awaitPending() {
        awaitPending(false);
    }

    private void awaitPending(boolean broadcast) {
        int k = 0;
        try {
            for (; k < pending.size(); k++) {
                Tensor result = kolo.await(pending.get(k), "the exchange of the model's arrays");
                int i = pendingIndex[k];
                if (broadcast) {
                    views[i].view().data().duplicate().put(result.buffer());
                }
                leftovers.set(i, null);
            }
        } catch (RuntimeException e) {
            abandon(k + 1, k); // the k-th was let go of by its own wait
            throw e;
        } finally {
            finishAll();
        }
    }

    /** Forgets what was submitted without waiting for it (after another collective of the step failed). */
    void dropPending() {
        abandon(0, 0);
        finishAll();
    }

    /**
     * Abandons the exchange's ops from the {@code from}-th on, and leaves the engine's arrays as they are from the
     * {@code keepFrom}-th on (nothing written back from a copy): once this returns none of them touches the
     * engine's memory. Each stays its parameter's leftover until the next exchange has waited for it.
     */
    private void abandon(int from, int keepFrom) {
        for (int k = from; k < pending.size(); k++) {
            kolo.abandon(pending.get(k));
        }
        for (int k = keepFrom; k < pending.size(); k++) {
            views[pendingIndex[k]].drop();
        }
    }

    /**
     * Registers every buffer, and with {@code trainedToo} every other parameter, with {@code state} as the
     * engine's own memory, so that commits and checkpoints read it and a restore writes it.
     *
     * @throws IllegalStateException if the engine hands out copies of its arrays rather than views
     */
    void register(ElasticState state, boolean trainedToo) {
        for (int i = 0; i < parameters.size(); i++) {
            if (!trainedToo && !isBuffer(parameters.get(i))) {
                continue;
            }
            NDArray array = parameters.get(i).getArray();
            if (!EngineArrays.shared(array)) {
                throw new IllegalStateException("the engine (" + array.getManager().getEngine().getEngineName()
                        + ") hands out copies of '" + names.get(i) + "', not its memory, so an elastic state cannot "
                        + "hold it: use the PyTorch engine on CPU");
            }
            state.buffer(names.get(i), DType.FLOAT32, array.toByteBuffer(true).order(ByteOrder.LITTLE_ENDIAN),
                    array.getShape().getShape());
        }
    }

    private void finishAll() {
        for (EngineTensor view : views) {
            view.finish();
        }
        for (int i = 0; i < gradients.length; i++) {
            if (gradients[i] != null) {
                gradients[i].close();
                gradients[i] = null;
            }
        }
        pending.clear();
    }

    private void submit(int i, NDArray array, String prefix, ReduceOp op) {
        Tensor t = open(i, array);
        submitOp(i, kolo.allreduceInPlaceAsync(prefix + names.get(i), t, op, 1.0, 1.0));
    }

    /**
     * A tensor over parameter {@code i}'s array for this exchange, once the op of a failed exchange under its
     * name is over (its result, on a copy, is discarded; and so is its failure: the new op reports its own).
     */
    private Tensor open(int i, NDArray array) {
        CompletableFuture<Tensor> leftover = leftovers.get(i);
        if (leftover != null) {
            try {
                kolo.await(leftover, "the exchange of '" + names.get(i) + "' of a step that failed");
            } catch (KoloInterruptedException e) {
                throw e; // still the leftover: the next step waits for it again
            } catch (KoloException e) {
                // discarded with the step it belonged to
            }
            leftovers.set(i, null);
        }
        return views[i].open(array);
    }

    private void submitOp(int i, CompletableFuture<Tensor> op) {
        pendingIndex[pending.size()] = i;
        pending.add(op);
        leftovers.set(i, op); // until its wait succeeds
    }

    /** @return the block's parameter names, in the block's order */
    List<String> names() {
        return names;
    }

    /** @return the block's parameters in the order of {@link #names()} */
    List<Parameter> parameters() {
        return parameters;
    }

    /** @return the buffers' indexes in {@link #parameters()}, in the block's order */
    int[] buffers() {
        return buffers.clone();
    }
}
