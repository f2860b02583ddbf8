package dev.kolo.djl;

import ai.djl.ndarray.NDArray;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import ai.djl.util.Pair;
import dev.kolo.elastic.ElasticState;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The collectives that keep a block's engine arrays equal on every rank, run on the arrays' own memory: the
 * broadcast of every parameter and buffer at the start, and per step the average of every gradient and of every
 * buffer (parameters without a gradient: BatchNorm's running mean and variance). Gradients are submitted last
 * layer first (the order a backward pass completes them in) and the buffers with them, so that the runtime
 * fuses them into few ring operations.
 */
final class ModelExchange {
    private final Kolo kolo;
    private final List<String> names = new ArrayList<>();
    private final List<Parameter> parameters = new ArrayList<>();
    private final int trained;
    private final EngineTensor[] views;
    private final NDArray[] gradients;
    private final List<CompletableFuture<Tensor>> pending;
    /** How gradients combine over the ranks (buffers are always averaged). */
    private ReduceOp gradientOp = ReduceOp.AVERAGE;

    /** @param block an initialized block */
    ModelExchange(Kolo kolo, Block block) {
        EngineHeap.tuneOnce();
        this.kolo = kolo;
        List<Pair<String, Parameter>> buffers = new ArrayList<>();
        for (Pair<String, Parameter> named : block.getParameters()) {
            if (!named.getValue().isInitialized()) {
                throw new IllegalStateException("parameter '" + named.getKey() + "' is not initialized: initialize "
                        + "the model (trainer.initialize(inputShape)) before training it with Kolo");
            }
            if (named.getValue().requiresGradient()) {
                names.add(named.getKey());
                parameters.add(named.getValue());
            } else {
                buffers.add(named);
            }
        }
        this.trained = parameters.size();
        for (Pair<String, Parameter> named : buffers) {
            names.add(named.getKey());
            parameters.add(named.getValue());
        }
        this.views = new EngineTensor[parameters.size()];
        for (int i = 0; i < views.length; i++) {
            views[i] = new EngineTensor();
        }
        this.gradients = new NDArray[trained];
        this.pending = new ArrayList<>(parameters.size());
    }

    /** Overwrites every parameter and buffer with rank {@code root}'s values. */
    void broadcast(int root) {
        broadcast(root, 0);
    }

    /** Overwrites every buffer (not the trained parameters) with rank {@code root}'s values. */
    void broadcastBuffers(int root) {
        broadcast(root, trained);
    }

    private void broadcast(int root, int from) {
        pending.clear();
        for (int i = from; i < parameters.size(); i++) {
            pending.add(kolo.broadcastAsync("djl.value." + names.get(i), views[i].open(parameters.get(i).getArray()),
                    root));
        }
        try {
            for (int i = from; i < parameters.size(); i++) {
                Tensor result = kolo.await(pending.get(i - from), "djl.value." + names.get(i));
                views[i].view().data().duplicate().put(result.buffer());
            }
        } finally {
            finishAll();
        }
    }

    /** Sets how gradients combine over the ranks: AVERAGE (the default), SUM or ADASUM. */
    void gradientOp(ReduceOp op) {
        this.gradientOp = op;
    }

    /**
     * Replaces every gradient by its average over the ranks (or what {@link #gradientOp} says) and every buffer by
     * its average, in place.
     * Runs before the optimizer's update; the arrays' memory is read and written while the caller waits.
     */
    void averageGradientsAndBuffers() {
        pending.clear();
        try {
            for (int i = trained - 1; i >= 0; i--) {
                gradients[i] = parameters.get(i).getArray().getGradient();
                submit(i, gradients[i], "djl.grad.", gradientOp);
            }
            submitBufferAverages();
            awaitPending();
        } finally {
            finishAll();
        }
    }

    /**
     * Starts averaging every buffer over the ranks, in place; {@link #awaitPending} waits for it. Starting it
     * before waiting for other collectives lets the runtime fuse the buffers with them.
     */
    void submitBufferAverages() {
        for (int i = trained; i < parameters.size(); i++) {
            submit(i, parameters.get(i).getArray(), "djl.buffer.", ReduceOp.AVERAGE);
        }
    }

    /** Waits for every collective submitted since the last wait and writes back results held in copies. */
    void awaitPending() {
        try {
            for (int k = 0; k < pending.size(); k++) {
                kolo.await(pending.get(k), "the average of the model's arrays");
            }
        } finally {
            finishAll();
        }
    }

    /** Forgets what was submitted without waiting for it (after another collective of the step failed). */
    void dropPending() {
        finishAll();
    }

    /**
     * Registers every buffer, and with {@code trainedToo} every trained parameter, with {@code state} as the
     * engine's own memory, so that commits and checkpoints read it and a restore writes it.
     *
     * @throws IllegalStateException if the engine hands out copies of its arrays rather than views
     */
    void register(ElasticState state, boolean trainedToo) {
        for (int i = trainedToo ? 0 : trained; i < parameters.size(); i++) {
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
        for (int i = 0; i < trained; i++) {
            if (gradients[i] != null) {
                gradients[i].close();
                gradients[i] = null;
            }
        }
        pending.clear();
    }

    private void submit(int i, NDArray array, String prefix, ReduceOp op) {
        Tensor t = views[i].open(array);
        pending.add(kolo.allreduceInPlaceAsync(prefix + names.get(i), t, op, 1.0, 1.0));
    }

    /** @return the block's parameter names, trained ones first, then the buffers */
    List<String> names() {
        return names;
    }

    /** @return the block's parameters in the order of {@link #names()} */
    List<Parameter> parameters() {
        return parameters;
    }

    /** @return how many of {@link #parameters()} are trained (the rest are buffers) */
    int trained() {
        return trained;
    }
}
