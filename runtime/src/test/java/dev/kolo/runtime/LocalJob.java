package dev.kolo.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;
import java.util.function.Predicate;

/** Starts several real workers of one job in this JVM, concurrently, as a job's processes would. */
final class LocalJob implements AutoCloseable {
    private static final java.util.Map<String, Integer> PORTS = new java.util.concurrent.ConcurrentHashMap<>();
    final String name;
    final List<Kolo> workers;

    private LocalJob(String name, List<Kolo> workers) {
        this.name = name;
        this.workers = workers;
    }

    static String uniqueName(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    private static final java.util.concurrent.atomic.AtomicInteger NEXT_RANGE =
            new java.util.concurrent.atomic.AtomicInteger(new java.util.Random().nextInt(400));

    /**
     * A job of its own port range: jobs sharing a range stay apart too (see RendezvousFailureTest), but each
     * join then probes the other job's members, which costs seconds a test need not spend.
     */
    static int freshPortRange() {
        return 12000 + Settings.LOCAL_PORT_COUNT * (NEXT_RANGE.getAndIncrement() % 500);
    }

    static KoloConfig.Builder config(String job, int np) {
        return KoloConfig.builder().jobName(job).np(np).metricsPort(0)
                .set(Settings.CLUSTER_PORT, PORTS.computeIfAbsent(job, j -> freshPortRange()))
                .rendezvousTimeout(Duration.ofSeconds(60));
    }

    static LocalJob start(int np) {
        String job = uniqueName("job");
        return start(job, np, i -> config(job, np).build());
    }

    /** Starts {@code n} workers with the configs given; fails (closing any started) if one fails. */
    static LocalJob start(String job, int n, IntFunction<KoloConfig> configs) {
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<Kolo>> futures = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                KoloConfig c = configs.apply(i);
                futures.add(pool.submit(() -> Kolo.init(c)));
            }
            List<Kolo> started = new ArrayList<>();
            Exception failure = null;
            for (Future<Kolo> f : futures) {
                try {
                    started.add(f.get());
                } catch (Exception e) {
                    failure = failure == null ? e : failure;
                }
            }
            if (failure != null) {
                started.forEach(Kolo::close);
                throw new IllegalStateException("job " + job + " did not form", failure);
            }
            return new LocalJob(job, started);
        } finally {
            pool.shutdownNow();
        }
    }

    /** Runs {@code action} on every worker concurrently (as their training loops would) and returns results. */
    <T> List<T> onAll(java.util.function.Function<Kolo, T> action) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(workers.size());
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (Kolo k : workers) {
                futures.add(pool.submit(() -> action.apply(k)));
            }
            List<T> out = new ArrayList<>();
            for (Future<T> f : futures) {
                out.add(f.get());
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Submits barriers on {@code worker}, whose generation a lost or closed rank ended, until one fails naming
     * what {@code named} accepts (membership names the rank that went; a data plane may first name the neighbour
     * that closed a connection), or 30 s have passed. Every barrier must fail: the generation is over.
     *
     * @return the last error seen, which the caller checks
     */
    static WorkerLostException lastLossError(Kolo worker, Predicate<WorkerLostException> named)
            throws InterruptedException, TimeoutException {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        WorkerLostException last = null;
        while (System.nanoTime() < until) {
            try {
                CompletableFuture.runAsync(worker::barrier).get(30, TimeUnit.SECONDS);
                throw new AssertionError("a barrier succeeded on a generation that a rank's going ended");
            } catch (ExecutionException e) {
                if (!(e.getCause() instanceof WorkerLostException lost)) {
                    throw new AssertionError("expected a WorkerLostException, got " + e.getCause(), e.getCause());
                }
                last = lost;
            }
            if (named.test(last)) {
                break;
            }
            Thread.sleep(10); // poll interval; the deadline above bounds the wait
        }
        return last;
    }

    /** @return the workers indexed by their rank */
    List<Kolo> byRank() {
        Kolo[] byRank = new Kolo[workers.size()];
        workers.forEach(k -> byRank[k.rank()] = k);
        return List.of(byRank);
    }

    @Override
    public void close() {
        workers.parallelStream().forEach(Kolo::close);
    }
}
