package dev.kolo.samples.mnist;

import dev.kolo.runtime.train.Parameter;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.function.Consumer;

/**
 * A multilayer perceptron (fully connected layers, ReLU between them, softmax cross-entropy on top) in
 * plain Java over flat arrays. Every buffer is sized for {@code maxBatch} once, so a training step
 * allocates nothing; the inner loops run over contiguous rows so the JIT vectorises them. Weights of a
 * layer are stored {@code [in][out]} row-major. Not thread-safe.
 */
final class Mlp implements SampleModel {
    private final int[] sizes;
    private final int layers;
    private final int maxBatch;
    private final float[][] w;
    private final float[][] b;
    private final float[][] dw;
    private final float[][] db;
    /** act[l] is the output of layer l (act[0] is the caller's input); the last holds softmax probabilities. */
    private final float[][] act;
    /** delta[l] is d(loss)/d(pre-activation of layer l), for l >= 1. */
    private final float[][] delta;
    private final List<Parameter> parameters;
    private final Parameter[] weightParams;
    private final Parameter[] biasParams;
    private int batch;
    private int[] labels;

    /**
     * @param sizes layer widths, input first, classes last (e.g. 784, 256, 128, 10)
     * @param seed  initial weights are He-normal from this seed
     */
    Mlp(int[] sizes, int maxBatch, long seed) {
        if (sizes.length < 2 || maxBatch < 1) {
            throw new IllegalArgumentException("an MLP needs at least an input and an output layer and a batch >= 1");
        }
        this.sizes = sizes.clone();
        this.layers = sizes.length - 1;
        this.maxBatch = maxBatch;
        w = new float[layers + 1][];
        b = new float[layers + 1][];
        dw = new float[layers + 1][];
        db = new float[layers + 1][];
        act = new float[layers + 1][];
        delta = new float[layers + 1][];
        weightParams = new Parameter[layers + 1];
        biasParams = new Parameter[layers + 1];
        List<Parameter> ps = new ArrayList<>();
        Random random = new Random(seed);
        for (int l = 1; l <= layers; l++) {
            int in = sizes[l - 1];
            int out = sizes[l];
            w[l] = new float[in * out];
            b[l] = new float[out];
            dw[l] = new float[in * out];
            db[l] = new float[out];
            act[l] = new float[maxBatch * out];
            delta[l] = new float[maxBatch * out];
            double std = Math.sqrt(2.0 / in);
            for (int i = 0; i < w[l].length; i++) {
                w[l][i] = (float) (random.nextGaussian() * std);
            }
            weightParams[l] = Parameter.of("fc" + l + ".weight", w[l], dw[l], in, out);
            biasParams[l] = Parameter.of("fc" + l + ".bias", b[l], db[l], out);
            ps.add(weightParams[l]);
            ps.add(biasParams[l]);
        }
        this.parameters = Collections.unmodifiableList(ps);
    }

    /** @return the parameters in layer order (weight, bias per layer) */
    @Override
    public List<Parameter> parameters() {
        return parameters;
    }

    int inputSize() {
        return sizes[0];
    }

    @Override
    public double evaluate(float[] x, int[] y, int n) {
        return forward(x, y, n);
    }

    @Override
    public String describe() {
        return "mlp " + java.util.Arrays.toString(sizes);
    }

    int classes() {
        return sizes[layers];
    }

    @Override
    public int maxBatch() {
        return maxBatch;
    }

    /**
     * Forward pass over {@code n} samples of {@code x} ({@code n * inputSize}) with labels {@code y}.
     *
     * @return the mean cross-entropy loss of the batch
     */
    @Override
    public double forward(float[] x, int[] y, int n) {
        if (n < 1 || n > maxBatch) {
            throw new IllegalArgumentException("batch of " + n + " (the model holds buffers for 1.." + maxBatch + ")");
        }
        act[0] = x;
        batch = n;
        labels = y;
        for (int l = 1; l <= layers; l++) {
            affine(act[l - 1], w[l], b[l], act[l], n, sizes[l - 1], sizes[l]);
            if (l < layers) {
                relu(act[l], n * sizes[l]);
            }
        }
        return softmaxLoss(act[layers], y, n, sizes[layers]);
    }

    /**
     * Backward pass of the last {@link #forward}: writes every parameter's gradient of the mean loss and
     * reports each to {@code ready} as soon as it is complete, last layer first (bias, then weight), so a
     * distributed optimizer can exchange it while the earlier layers are still being differentiated.
     */
    @Override
    public void backward(Consumer<Parameter> ready) {
        int n = batch;
        int classes = sizes[layers];
        float[] top = delta[layers];
        float[] p = act[layers];
        float inv = 1f / n;
        for (int s = 0; s < n; s++) {
            int row = s * classes;
            for (int c = 0; c < classes; c++) {
                top[row + c] = p[row + c] * inv;
            }
            top[row + labels[s]] -= inv;
        }
        for (int l = layers; l >= 1; l--) {
            int in = sizes[l - 1];
            int out = sizes[l];
            biasGradient(delta[l], db[l], n, out);
            ready.accept(biasParams[l]);
            weightGradient(act[l - 1], delta[l], dw[l], n, in, out);
            ready.accept(weightParams[l]);
            if (l > 1) {
                inputGradient(delta[l], w[l], act[l - 1], delta[l - 1], n, in, out);
            }
        }
    }

    /** @return how many of the last {@link #forward}'s samples were classified as their label */
    @Override
    public int correct() {
        int classes = sizes[layers];
        float[] p = act[layers];
        int correct = 0;
        for (int s = 0; s < batch; s++) {
            int row = s * classes;
            int best = 0;
            for (int c = 1; c < classes; c++) {
                if (p[row + c] > p[row + best]) {
                    best = c;
                }
            }
            if (best == labels[s]) {
                correct++;
            }
        }
        return correct;
    }

    /** out[s][j] = bias[j] + sum_k in[s][k] * w[k][j]; zero inputs (background pixels, dead ReLUs) are skipped. */
    private static void affine(float[] in, float[] w, float[] bias, float[] out, int n, int inSize, int outSize) {
        for (int s = 0; s < n; s++) {
            int o = s * outSize;
            System.arraycopy(bias, 0, out, o, outSize);
            int i = s * inSize;
            for (int k = 0; k < inSize; k++) {
                float a = in[i + k];
                if (a == 0f) {
                    continue;
                }
                addScaled(a, w, k * outSize, out, o, outSize);
            }
        }
    }

    /** y[yAt + j] += a * x[xAt + j] for j below n: one input's contribution to a row of outputs. */
    private static void addScaled(float a, float[] x, int xAt, float[] y, int yAt, int n) {
        for (int j = 0; j < n; j++) {
            y[yAt + j] += a * x[xAt + j];
        }
    }

    private static void relu(float[] v, int count) {
        for (int i = 0; i < count; i++) {
            if (v[i] < 0f) {
                v[i] = 0f;
            }
        }
    }

    /** Turns logits into probabilities in place; returns the mean of -log p[label]. */
    private static double softmaxLoss(float[] z, int[] y, int n, int classes) {
        double loss = 0;
        for (int s = 0; s < n; s++) {
            int row = s * classes;
            float max = z[row];
            for (int c = 1; c < classes; c++) {
                max = Math.max(max, z[row + c]);
            }
            double sum = 0;
            for (int c = 0; c < classes; c++) {
                float e = (float) Math.exp(z[row + c] - max);
                z[row + c] = e;
                sum += e;
            }
            float inv = (float) (1.0 / sum);
            for (int c = 0; c < classes; c++) {
                z[row + c] *= inv;
            }
            loss -= Math.log(Math.max(z[row + y[s]], 1e-30f));
        }
        return loss / n;
    }

    private static void biasGradient(float[] d, float[] db, int n, int out) {
        java.util.Arrays.fill(db, 0f);
        for (int s = 0; s < n; s++) {
            int row = s * out;
            for (int j = 0; j < out; j++) {
                db[j] += d[row + j];
            }
        }
    }

    /** dw[k][j] = sum_s in[s][k] * d[s][j], accumulated row by row so the inner loop is contiguous. */
    private static void weightGradient(float[] in, float[] d, float[] dw, int n, int inSize, int out) {
        java.util.Arrays.fill(dw, 0f);
        for (int s = 0; s < n; s++) {
            int i = s * inSize;
            int row = s * out;
            for (int k = 0; k < inSize; k++) {
                float a = in[i + k];
                if (a == 0f) {
                    continue;
                }
                addScaled(a, d, row, dw, k * out, out);
            }
        }
    }

    /**
     * dIn[s][k] = (sum_j d[s][j] * w[k][j]) where the layer below was active (ReLU), else 0. Four partial
     * sums, because the JIT does not vectorise a floating-point reduction.
     */
    private static void inputGradient(float[] d, float[] w, float[] below, float[] dIn, int n, int inSize, int out) {
        for (int s = 0; s < n; s++) {
            int row = s * out;
            int i = s * inSize;
            for (int k = 0; k < inSize; k++) {
                if (below[i + k] <= 0f) {
                    dIn[i + k] = 0f;
                    continue;
                }
                int wk = k * out;
                float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
                int j = 0;
                for (; j + 3 < out; j += 4) {
                    s0 += d[row + j] * w[wk + j];
                    s1 += d[row + j + 1] * w[wk + j + 1];
                    s2 += d[row + j + 2] * w[wk + j + 2];
                    s3 += d[row + j + 3] * w[wk + j + 3];
                }
                for (; j < out; j++) {
                    s0 += d[row + j] * w[wk + j];
                }
                dIn[i + k] = (s0 + s1) + (s2 + s3);
            }
        }
    }
}
