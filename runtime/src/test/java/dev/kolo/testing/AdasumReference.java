package dev.kolo.testing;

import java.util.ArrayList;
import java.util.List;

/** The reference Adasum for tests: the paper's recursive formulation in double precision. */
public final class AdasumReference {
    private AdasumReference() {
    }

    /**
     * The paper's recursive formulation: {@code Adasum(g_0..g_{n-1})} as a binary tree of pairs, in double
     * precision; the first {@code 2 (n - p)} gradients pair up first when {@code n} is not a power of two
     * {@code p} (the tree the runtime documents on {@code ReduceOp.ADASUM}).
     */
    public static double[] of(double[][] g) {
        int n = g.length;
        int p = Integer.highestOneBit(n);
        List<double[]> level = new ArrayList<>();
        for (int i = 0; i < n - p; i++) {
            level.add(pair(g[2 * i], g[2 * i + 1]));
        }
        for (int i = 2 * (n - p); i < n; i++) {
            level.add(g[i]);
        }
        while (level.size() > 1) {
            List<double[]> next = new ArrayList<>();
            for (int i = 0; i < level.size(); i += 2) {
                next.add(pair(level.get(i), level.get(i + 1)));
            }
            level = next;
        }
        return level.get(0);
    }

    /** {@code (1 - a.b / 2|a|^2) a + (1 - a.b / 2|b|^2) b}; a zero side keeps coefficient 1 (it is zero). */
    public static double[] pair(double[] a, double[] b) {
        double ab = 0;
        double aa = 0;
        double bb = 0;
        for (int i = 0; i < a.length; i++) {
            ab += a[i] * b[i];
            aa += a[i] * a[i];
            bb += b[i] * b[i];
        }
        double ca = aa == 0 ? 1 : 1 - ab / (2 * aa);
        double cb = bb == 0 ? 1 : 1 - ab / (2 * bb);
        double[] out = new double[a.length];
        for (int i = 0; i < a.length; i++) {
            out[i] = ca * a[i] + cb * b[i];
        }
        return out;
    }
}
