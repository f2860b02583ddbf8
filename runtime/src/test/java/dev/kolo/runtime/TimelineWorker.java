package dev.kolo.runtime;

/** Writes a timeline as fast as it can (many small named allreduces) until killed. */
public final class TimelineWorker {
    private TimelineWorker() {
    }

    public static void main(String[] args) {
        try (Kolo kolo = Kolo.init()) {
            System.out.println("timeline started");
            for (long i = 0; ; i++) {
                kolo.allreduce("t" + (i % 50), Tensor.of(new float[] {i}, 1), ReduceOp.SUM);
            }
        }
    }
}
