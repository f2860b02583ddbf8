package dev.kolo.samples.bench.model;

import java.util.List;

/**
 * Fits the model's machine parameters (α, β, the scheduler hand-off and the per-op overhead; γ stays the
 * kernels' measured speed) to measured cached allreduce times, so that the model can be held against this
 * machine before its projections are believed. The time is linear in the four, so the fit is a linear least
 * squares on relative errors ((model - measured) / measured, close to a fit on log time for errors of tens of
 * percent, and no size outweighs another), with every parameter kept non-negative: each subset of the four is
 * solved with the others at zero and the best non-negative solution wins (16 small solves).
 */
final class CostModelFit {
    private static final int PARAMETERS = 4;

    private CostModelFit() {
    }

    /**
     * @param base γ and the agreement scheme to keep
     * @param cores cores of the host the measurements ran on (all ranks on it)
     * @return the fitted model
     */
    static CostModel fit(CostModel base, int cores, List<MeasuredPoint> points) {
        if (points.isEmpty()) {
            throw new IllegalArgumentException("no measured points to fit");
        }
        CostModel shape = base.withFit(0, 0, 0, 0, cores);
        int m = points.size();
        double[][] rows = new double[m][PARAMETERS];
        double[] target = new double[m];
        for (int i = 0; i < m; i++) {
            MeasuredPoint p = points.get(i);
            CollectiveCost c = shape.cachedAllreduce(p.np(), p.bytes());
            double f = shape.sharing(p.np());
            double fixed = c.pathReduced() * base.gamma * f;
            double[] x = {c.steps(), c.pathBytes() * f, c.steps() * shape.oversubscription(p.np()), 1};
            for (int j = 0; j < PARAMETERS; j++) {
                rows[i][j] = x[j] / p.seconds();
            }
            target[i] = 1 - fixed / p.seconds();
        }
        double[] best = new double[PARAMETERS];
        double bestResidual = residual(rows, target, best);
        for (int subset = 1; subset < (1 << PARAMETERS); subset++) {
            double[] theta = solve(rows, target, subset);
            if (theta == null) {
                continue;
            }
            double r = residual(rows, target, theta);
            if (r < bestResidual) {
                bestResidual = r;
                best = theta;
            }
        }
        return base.withFit(best[0], best[1], best[2], best[3], cores);
    }

    /** Share of the points the model gives within {@code tolerance} (0.3: ±30%) of the measured time. */
    static double withinShare(CostModel model, List<MeasuredPoint> points, double tolerance) {
        int in = 0;
        for (MeasuredPoint p : points) {
            if (Math.abs(model.cachedAllreduceSeconds(p.np(), p.bytes()) / p.seconds() - 1) <= tolerance) {
                in++;
            }
        }
        return points.isEmpty() ? 0 : (double) in / points.size();
    }

    private static double residual(double[][] rows, double[] target, double[] theta) {
        double sum = 0;
        for (int i = 0; i < rows.length; i++) {
            double e = -target[i];
            for (int j = 0; j < PARAMETERS; j++) {
                e += rows[i][j] * theta[j];
            }
            sum += e * e;
        }
        return sum;
    }

    /** Least squares on the parameters in {@code subset} (the others 0); null if singular or any is negative. */
    private static double[] solve(double[][] rows, double[] target, int subset) {
        int[] idx = new int[Integer.bitCount(subset)];
        for (int j = 0, k = 0; j < PARAMETERS; j++) {
            if ((subset & (1 << j)) != 0) {
                idx[k++] = j;
            }
        }
        int k = idx.length;
        // Normal equations, columns scaled to unit norm so that seconds per step and per byte stay comparable.
        double[] scale = new double[k];
        for (int a = 0; a < k; a++) {
            double s = 0;
            for (double[] row : rows) {
                s += row[idx[a]] * row[idx[a]];
            }
            if (s == 0) {
                return null;
            }
            scale[a] = Math.sqrt(s);
        }
        double[][] ata = new double[k][k + 1];
        for (double[] row : rows) {
            for (int a = 0; a < k; a++) {
                double xa = row[idx[a]] / scale[a];
                for (int b = 0; b < k; b++) {
                    ata[a][b] += xa * row[idx[b]] / scale[b];
                }
            }
        }
        for (int a = 0; a < k; a++) {
            double s = 0;
            for (int i = 0; i < rows.length; i++) {
                s += rows[i][idx[a]] / scale[a] * target[i];
            }
            ata[a][k] = s;
        }
        double[] z = gauss(ata, k);
        if (z == null) {
            return null;
        }
        double[] theta = new double[PARAMETERS];
        for (int a = 0; a < k; a++) {
            double v = z[a] / scale[a];
            if (v < 0) {
                return null;
            }
            theta[idx[a]] = v;
        }
        return theta;
    }

    /** Gaussian elimination with partial pivoting on an augmented k x (k+1) matrix; null if singular. */
    private static double[] gauss(double[][] m, int k) {
        for (int c = 0; c < k; c++) {
            int pivot = c;
            for (int r = c + 1; r < k; r++) {
                if (Math.abs(m[r][c]) > Math.abs(m[pivot][c])) {
                    pivot = r;
                }
            }
            if (Math.abs(m[pivot][c]) < 1e-12) {
                return null;
            }
            double[] t = m[c];
            m[c] = m[pivot];
            m[pivot] = t;
            for (int r = 0; r < k; r++) {
                if (r != c) {
                    double f = m[r][c] / m[c][c];
                    for (int j = c; j <= k; j++) {
                        m[r][j] -= f * m[c][j];
                    }
                }
            }
        }
        double[] z = new double[k];
        for (int c = 0; c < k; c++) {
            z[c] = m[c][k] / m[c][c];
        }
        return z;
    }
}
