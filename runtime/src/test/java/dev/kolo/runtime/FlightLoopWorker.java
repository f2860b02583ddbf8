package dev.kolo.runtime;

import dev.kolo.testing.StdinWatch;

/**
 * A worker process for the flight recorder's tests: allreduces a small tensor in a loop until an op fails, then closes
 * (which writes the failure's flight recorder file if its thread has not yet) and exits with status 3. Ends itself
 * when its standard input closes.
 */
public final class FlightLoopWorker {
    private FlightLoopWorker() {
    }

    public static void main(String[] args) {
        StdinWatch.exitWhenClosed();
        Kolo kolo = Kolo.init();
        Tensor t = Tensor.allocate(DType.FLOAT32, 1024);
        System.out.println("flight loop rank=" + kolo.rank());
        try {
            for (long i = 0; ; i++) {
                kolo.allreduce("grad", t, ReduceOp.SUM);
                if (i == 100) {
                    System.out.println("flight loop running rank=" + kolo.rank());
                }
            }
        } catch (KoloException e) {
            System.out.println("flight loop failed rank=" + kolo.rank() + ": " + e.getMessage());
            kolo.close();
            System.exit(3);
        }
    }
}
