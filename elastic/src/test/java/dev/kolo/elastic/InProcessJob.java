package dev.kolo.elastic;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Settings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/** Several real workers of one job in this JVM, started and driven concurrently. */
public final class InProcessJob implements AutoCloseable {
    public final List<Kolo> workers = new ArrayList<>();
    private final ExecutorService pool;

    public InProcessJob(int np, java.util.function.UnaryOperator<KoloConfig.Builder> tweak) throws Exception {
        String job = "ewj-" + UUID.randomUUID().toString().substring(0, 8);
        int port = 16000 + 20 * new java.util.Random().nextInt(200);
        pool = Executors.newFixedThreadPool(np);
        List<Future<Kolo>> fs = new ArrayList<>();
        for (int i = 0; i < np; i++) {
            KoloConfig c = tweak.apply(KoloConfig.builder().jobName(job).np(np).metricsPort(0).set(Settings.CLUSTER_PORT, port)
                    .rendezvousTimeout(Duration.ofSeconds(60))).build();
            fs.add(pool.submit(() -> Kolo.init(c)));
        }
        for (Future<Kolo> f : fs) {
            workers.add(f.get(90, TimeUnit.SECONDS));
        }
    }

    /** Runs {@code action} on every worker concurrently; returns the results in worker order. */
    public <T> List<T> onAll(Function<Kolo, T> action) throws Exception {
        List<Future<T>> fs = new ArrayList<>();
        for (Kolo k : workers) {
            fs.add(pool.submit(() -> action.apply(k)));
        }
        List<T> out = new ArrayList<>();
        for (Future<T> f : fs) {
            out.add(f.get(60, TimeUnit.SECONDS));
        }
        return out;
    }

    @Override
    public void close() {
        workers.parallelStream().forEach(Kolo::close);
        pool.shutdownNow();
    }
}
