package dev.kolo.samples;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import java.util.ArrayList;
import java.util.List;

/**
 * One worker that runs every collective on every dtype through the public API and checks each result against a
 * reference it computes itself (every rank's input is a function of rank and index, in small integers that every
 * type holds exactly): allreduce with each op at lengths 0, 1, odd and past the small-message sizes (the hierarchy
 * across hosts), allgather with rows per rank, broadcast from every root, reducescatter, alltoall with uneven splits,
 * barrier. Prints {@code check ok rank=R size=N local=L/LS cases=K}, or exits 1 naming the first wrong element.
 */
public final class CollectiveCheckWorker {
    private static final int[] LENGTHS = {0, 1, 1001, 40_003, 300_007};

    private CollectiveCheckWorker() {
    }

    public static void main(String[] args) {
        int cases = 0;
        try (Kolo kolo = Kolo.init()) {
            int n = kolo.size();
            int me = kolo.rank();
            for (DType t : DType.values()) {
                for (ReduceOp op : new ReduceOp[] {ReduceOp.SUM, ReduceOp.AVERAGE, ReduceOp.MIN, ReduceOp.MAX,
                        ReduceOp.PRODUCT}) {
                    for (int len : LENGTHS) {
                        if (op == ReduceOp.PRODUCT && len > 1001) {
                            continue;
                        }
                        Tensor out = kolo.allreduce("ar." + t + "." + op + "." + len, input(t, op, me, len), op);
                        check(out, reference(t, op, n, len), "allreduce " + t + " " + op + " length " + len);
                        cases++;
                    }
                }
                // allgather: rank r contributes r + 1 rows of 3
                Tensor mine = input(t, ReduceOp.SUM, me, 3 * (me + 1), me + 1, 3);
                Tensor gathered = kolo.allgather("ag." + t, mine);
                List<Double> want = new ArrayList<>();
                for (int r = 0; r < n; r++) {
                    for (double v : values(t, ReduceOp.SUM, r, 3 * (r + 1))) {
                        want.add(v);
                    }
                }
                check(gathered, want.stream().mapToDouble(Double::doubleValue).toArray(), "allgather " + t);
                for (int root = 0; root < n; root++) {
                    Tensor b = kolo.broadcast("bc." + t + "." + root, input(t, ReduceOp.SUM, me, 40_003), root);
                    check(b, values(t, ReduceOp.SUM, root, 40_003), "broadcast " + t + " from " + root);
                }
                int rows = 2 * n + 1; // not a multiple of the size: the first rank gets an extra row
                Tensor rs = kolo.reducescatter("rs." + t, input(t, ReduceOp.SUM, me, rows * 5, rows, 5), ReduceOp.SUM);
                double[] all = reference(t, ReduceOp.SUM, n, rows * 5);
                int first = 0;
                for (int r = 0; r < me; r++) {
                    first += rows / n + (r < rows % n ? 1 : 0);
                }
                int mineRows = rows / n + (me < rows % n ? 1 : 0);
                check(rs, java.util.Arrays.copyOfRange(all, first * 5, (first + mineRows) * 5), "reducescatter " + t);
                // alltoall: rank r sends j + 1 rows of 2 to rank j (zero rows to none)
                int[] splits = new int[n];
                int sendRows = 0;
                for (int j = 0; j < n; j++) {
                    splits[j] = j + 1;
                    sendRows += j + 1;
                }
                Tensor a = kolo.alltoall("a2a." + t, input(t, ReduceOp.SUM, me, sendRows * 2, sendRows, 2), splits);
                List<Double> fromAll = new ArrayList<>();
                for (int r = 0; r < n; r++) {
                    double[] theirs = values(t, ReduceOp.SUM, r, sendRows * 2);
                    int at = 0;
                    for (int j = 0; j < me; j++) {
                        at += 2 * (j + 1);
                    }
                    for (int i = 0; i < 2 * (me + 1); i++) {
                        fromAll.add(theirs[at + i]);
                    }
                }
                check(a, fromAll.stream().mapToDouble(Double::doubleValue).toArray(), "alltoall " + t);
                kolo.barrier();
                cases += 4 + n;
            }
            System.out.println("check ok rank=" + me + " size=" + n + " local=" + kolo.localRank() + "/"
                    + kolo.localSize() + " cases=" + cases);
        } catch (RuntimeException | AssertionError e) {
            System.out.println("check failed: " + e);
            e.printStackTrace(System.out);
            System.exit(1);
        }
    }

    /** Small integers every type holds exactly (products of up to 8 ranks too: 1 or 2 each). */
    static double value(DType t, ReduceOp op, int rank, int i) {
        if (op == ReduceOp.PRODUCT) {
            return 1 + ((i + rank) % 3 == 0 ? 1 : 0);
        }
        return 1 + (i * 7 + rank * 3) % 5;
    }

    static double[] values(DType t, ReduceOp op, int rank, int len) {
        double[] v = new double[len];
        for (int i = 0; i < len; i++) {
            v[i] = value(t, op, rank, i);
        }
        return v;
    }

    static Tensor input(DType t, ReduceOp op, int rank, int len, long... shape) {
        float[] v = new float[len];
        for (int i = 0; i < len; i++) {
            v[i] = (float) value(t, op, rank, i);
        }
        return Tensor.of(t, v, shape.length == 0 ? new long[] {len} : shape);
    }

    /** The reduction over ranks 0..n-1 in double; AVERAGE divides (integer types truncate, as documented). */
    static double[] reference(DType t, ReduceOp op, int n, int len) {
        double[] out = new double[len];
        for (int i = 0; i < len; i++) {
            double acc = value(t, op, 0, i);
            for (int r = 1; r < n; r++) {
                double v = value(t, op, r, i);
                acc = switch (op) {
                    case SUM, AVERAGE -> acc + v;
                    case MIN -> Math.min(acc, v);
                    case MAX -> Math.max(acc, v);
                    case PRODUCT -> acc * v;
                    default -> throw new IllegalArgumentException(op.toString());
                };
            }
            if (op == ReduceOp.AVERAGE) {
                acc *= 1.0 / n; // as the runtime scales
                if (!t.isFloatingPoint()) {
                    acc = (long) acc;
                }
            }
            out[i] = acc;
        }
        return out;
    }

    static void check(Tensor got, double[] want, String what) {
        double[] g = got.toDoubleArray();
        if (g.length != want.length) {
            throw new AssertionError(what + ": " + g.length + " elements, expected " + want.length);
        }
        for (int i = 0; i < g.length; i++) {
            double tol = got.dtype() == DType.BFLOAT16 ? 0.02 * Math.abs(want[i]) : 1e-3 * Math.abs(want[i]);
            if (Math.abs(g[i] - want[i]) > tol) {
                throw new AssertionError(what + ": element " + i + " is " + g[i] + ", expected " + want[i]);
            }
        }
    }
}
