package dev.kolo.runtime.train;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Settings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/** Real workers of one job in this JVM, started concurrently as a job's processes would be, for the optimizer's tests. */
final class InJvmJob implements AutoCloseable {
    final List<Kolo> workers;

    private InJvmJob(List<Kolo> workers) {
        this.workers = workers;
    }

    /**
     * Forms a job of {@code np} workers named {@code prefix-<random>} on a port range of its own.
     *
     * @param settings more settings for every worker (e.g. an op timeout), or {@code b -> b}
     */
    static InJvmJob form(String prefix, int np, UnaryOperator<KoloConfig.Builder> settings) throws Exception {
        String job = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        int port = 12000 + 20 * (500 + new Random().nextInt(400));
        List<Callable<Kolo>> joins = new ArrayList<>();
        for (int i = 0; i < np; i++) {
            KoloConfig c = settings.apply(KoloConfig.builder().jobName(job).np(np).metricsPort(0).set(Settings.CLUSTER_PORT, port)
                    .rendezvousTimeout(Duration.ofSeconds(60))).build();
            joins.add(() -> Kolo.init(c));
        }
        return new InJvmJob(all(joins, 70));
    }

    /** Runs {@code action} on every worker concurrently (as their training loops would); results in worker order. */
    <T> List<T> onAll(Function<Kolo, T> action) throws Exception {
        return all(workers.stream().<Callable<T>>map(k -> () -> action.apply(k)).toList(), 100);
    }

    @Override
    public void close() {
        workers.parallelStream().forEach(Kolo::close);
    }

    /** Runs {@code tasks} concurrently, one thread each; their results in order, or the first failure. */
    private static <T> List<T> all(List<Callable<T>> tasks, long timeoutSeconds) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(tasks.size());
        try {
            List<T> out = new ArrayList<>();
            for (Future<T> f : pool.invokeAll(tasks, timeoutSeconds, TimeUnit.SECONDS)) {
                out.add(f.get());
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }
}
