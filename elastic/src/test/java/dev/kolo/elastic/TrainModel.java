package dev.kolo.elastic;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.zip.CRC32C;

/**
 * A synthetic data-parallel problem whose result does not depend on the number of workers: parameters w
 * (dimension D) pulled towards the targets c_i * u of a global batch of B samples per step; each rank
 * takes the samples of the batch with (i mod size) == rank, and the summed gradient is divided by B. With
 * momentum. The per-rank work is O(D), so D can make the gradient allreduce large at little compute cost.
 */
final class TrainModel {
    static final int BATCH = 16;
    static final float LR = 0.2f;
    static final float MOMENTUM = 0.5f;

    final int dim;
    final float[] w;
    final float[] v;
    final float[] u;

    TrainModel(int dim) {
        this.dim = dim;
        this.w = new float[dim];
        this.v = new float[dim];
        this.u = new float[dim];
        for (int j = 0; j < dim; j++) {
            u[j] = (float) Math.sin(j * 0.001) + 1f;
            w[j] = (float) Math.cos(j * 0.01); // every rank starts from the same initial values
        }
    }

    static double target(long sample) {
        return ((sample * 2654435761L) & 0x3ff) / 1024.0;
    }

    /** This rank's summed (not averaged) gradient for {@code step} into {@code g}. */
    void localGradient(long step, int rank, int size, float[] g) {
        int n = 0;
        double sum = 0;
        for (int k = 0; k < BATCH; k++) {
            if (k % size == rank) {
                n++;
                sum += target(step * BATCH + k);
            }
        }
        float fn = n;
        float fs = (float) sum;
        for (int j = 0; j < dim; j++) {
            g[j] = fn * w[j] - fs * u[j];
        }
    }

    /** Applies the globally summed gradient. */
    void apply(float[] summed) {
        for (int j = 0; j < dim; j++) {
            float g = summed[j] / BATCH;
            v[j] = MOMENTUM * v[j] + g;
            w[j] -= LR * v[j];
        }
    }

    /** @return the uninterrupted single-process result after {@code steps} steps */
    static TrainModel reference(int dim, long steps) {
        TrainModel m = new TrainModel(dim);
        float[] g = new float[dim];
        for (long s = 0; s < steps; s++) {
            m.localGradient(s, 0, 1, g);
            m.apply(g);
        }
        return m;
    }

    /** @return CRC32C of w and v, as hex: equal on ranks holding the same bytes */
    String checksum() {
        ByteBuffer b = ByteBuffer.allocate(dim * 8).order(ByteOrder.LITTLE_ENDIAN);
        b.asFloatBuffer().put(w).put(v);
        CRC32C c = new CRC32C();
        c.update(b);
        return String.format("%08x", c.getValue());
    }

    /** @return a few parameters, to compare with a reference within a tolerance */
    String probe() {
        StringBuilder sb = new StringBuilder();
        for (int j = 0; j < dim; j += Math.max(1, dim / 8)) {
            sb.append(sb.length() == 0 ? "" : ",").append(w[j]);
        }
        return sb.toString();
    }
}
