package dev.kolo.samples.example;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;

/**
 * The smallest complete Kolo program: every worker joins the job its environment describes, contributes its
 * rank + 1 to a sum over all workers, checks the sum, meets the others at a barrier and leaves.
 *
 * <pre>
 * java -jar worker.jar launch -np 3 -- java -cp worker.jar dev.kolo.samples.example.AllreduceExample
 * </pre>
 *
 * <p>Started alone (no {@code KOLO_*} settings) it is a job of one.
 */
public final class AllreduceExample {
    private AllreduceExample() {
    }

    /**
     * Runs one worker.
     *
     * @param args none
     */
    // example:main
    public static void main(String[] args) {
        // Job name, size, rank hint, discovery and secret come from the environment (KOLO_* variables).
        try (Kolo kolo = Kolo.init()) {
            int rank = kolo.rank();
            int size = kolo.size();
            float sum = kolo.allreduce("example.sum", Tensor.of(new float[] {rank + 1}), ReduceOp.SUM)
                    .toFloatArray()[0];
            float expected = size * (size + 1) / 2f;
            kolo.barrier();
            System.out.println("rank " + rank + " of " + size + ": sum=" + (long) sum + " expected=" + (long) expected);
            if (sum != expected) {
                System.exit(1);
            }
        } catch (KoloException e) {
            // A lost worker, a rendezvous that timed out, a refused setting: the message says what to do.
            System.err.println("example: " + e.getMessage());
            System.exit(1);
        }
    }
    // example:end
}
