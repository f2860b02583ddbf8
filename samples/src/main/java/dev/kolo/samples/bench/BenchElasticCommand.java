package dev.kolo.samples.bench;

import dev.kolo.elastic.Elastic;
import dev.kolo.elastic.ElasticState;
import dev.kolo.runtime.DType;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import dev.kolo.samples.launch.ChildJvmOptions;
import dev.kolo.samples.launch.KoloVersion;
import dev.kolo.samples.launch.Launcher;
import dev.kolo.samples.launch.ParentWatch;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code bench elastic -np N}: recovery time of an elastic job. N local worker processes train (a gradient
 * allreduce of {@code --bytes} per step, {@code --compute-ms} of simulated compute, a commit every 2
 * steps). Each trial SIGKILLs one worker at a random moment of a step (mostly inside the allreduce) and
 * measures the time until every survivor has completed a training step in the new, smaller ring; then a
 * replacement worker is started and the next trial waits until it is back in the ring.
 */
@Command(name = "elastic", description = "Elastic recovery: SIGKILL one of N workers, time until the survivors "
        + "complete their next step.", mixinStandardHelpOptions = true, versionProvider = KoloVersion.class,
        sortOptions = false)
public final class BenchElasticCommand implements Callable<Integer> {
    private static final String STEP = "elastic-step ";

    @Option(names = {"-np", "--np"}, required = true, paramLabel = "N", description = "Number of workers (>= 3).")
    int np;

    @Option(names = "--trials", paramLabel = "T", defaultValue = "10", description = "Kills (default: ${DEFAULT-VALUE}).")
    int trials;

    @Option(names = "--bytes", paramLabel = "B", defaultValue = "16777216",
            description = "Gradient bytes allreduced per step (default: ${DEFAULT-VALUE}).")
    long bytes;

    @Option(names = "--compute-ms", paramLabel = "MS", defaultValue = "20",
            description = "Simulated compute per step (default: ${DEFAULT-VALUE}).")
    long computeMs;

    @Mixin
    BenchWorkers role = new BenchWorkers();

    @Override
    public Integer call() throws Exception {
        if (np < 3) {
            throw new IllegalArgumentException("-np must be at least 3 (got " + np + "): one worker is killed, and "
                    + "the survivors go on only as a strict majority of the last generation (2 of 3 at least)");
        }
        if (trials < 1 || bytes < 4 || bytes > Integer.MAX_VALUE || computeMs < 0) {
            throw new IllegalArgumentException("--trials must be >= 1, --bytes 4..2^31-1, --compute-ms >= 0");
        }
        return role.isWorker() ? runWorker() : drive();
    }

    // ------------------------------------------------------------------ one worker

    private int runWorker() {
        Kolo kolo = BenchWorkers.joinJob(KoloConfig.builderFromEnvironment().metricsPort(0));
        int n = (int) (bytes / 4);
        float[] w = new float[n];
        Tensor grad = Tensor.allocate(DType.FLOAT32, n);
        ElasticState state = ElasticState.builder(kolo).replica(false).build();
        state.floats("w", w).value("step", 0L);
        Elastic.runOrExit(kolo, state, s -> {
            for (long step = s.longValue("step"); ; step++) {
                kolo.allreduceInPlace("grad", grad, ReduceOp.AVERAGE);
                w[(int) (step % n)] += 1f;
                s.set("step", step + 1);
                System.out.println(STEP + "step=" + (step + 1) + " size=" + kolo.size() + " gen=" + kolo.generation()
                        + " t=" + System.currentTimeMillis());
                if ((step + 1) % 2 == 0) {
                    s.commit();
                }
                if (computeMs > 0) {
                    try {
                        Thread.sleep(computeMs);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                        return null;
                    }
                }
            }
        });
        return 0;
    }

    // ------------------------------------------------------------------ the driver

    /** Last step line per worker index: size, generation, time. */
    private record Step(int size, long gen, long t) {
    }

    private final Map<Integer, Step> last = new ConcurrentHashMap<>();
    private final List<Process> workers = Collections.synchronizedList(new ArrayList<>());

    private int drive() throws Exception {
        String job = "bench-elastic-" + UUID.randomUUID().toString().substring(0, 8);
        int port = 16000 + 20 * new Random().nextInt(200);
        Thread cleanup = new Thread(() -> workers.forEach(Process::destroyForcibly));
        Runtime.getRuntime().addShutdownHook(cleanup);
        if (!role.json()) {
            System.out.printf(Locale.ROOT, "| %5s | %4s | %10s |  (%d bytes per allreduce, %d ms compute)%n", "trial",
                    "np", "recovery_s", bytes, computeMs);
        }
        List<Double> results = new ArrayList<>();
        try {
            for (int i = 0; i < np; i++) {
                start(job, port);
            }
            awaitRing(np, 90);
            Random random = new Random();
            for (int trial = 1; trial <= trials; trial++) {
                List<Integer> alive = aliveIndexes();
                int victim = alive.get(random.nextInt(alive.size()));
                long genBefore = last.get(victim).gen();
                Thread.sleep(50 + random.nextInt(150));
                firstAfter.clear();
                long killedAt = System.currentTimeMillis();
                workers.get(victim).destroyForcibly();
                last.remove(victim);
                double recovery = awaitRecovery(genBefore, killedAt, np - 1, 60);
                results.add(recovery);
                if (role.json()) {
                    System.out.printf(Locale.ROOT, "{\"bench\":\"elastic\",\"np\":%d,\"trial\":%d,\"recovery_s\":%.3f}%n",
                            np, trial, recovery);
                } else {
                    System.out.printf(Locale.ROOT, "| %5d | %4d | %10.3f |%n", trial, np, recovery);
                }
                System.out.flush();
                if (trial < trials) {
                    start(job, port);
                    awaitRing(np, 60);
                }
            }
        } finally {
            workers.forEach(Process::destroyForcibly);
            try {
                Runtime.getRuntime().removeShutdownHook(cleanup);
            } catch (IllegalStateException ignored) {
                // shutting down
            }
        }
        List<Double> sorted = new ArrayList<>(results);
        Collections.sort(sorted);
        System.err.printf(Locale.ROOT, "bench elastic: median recovery %.3f s over %d trials (np %d)%n",
                sorted.get(sorted.size() / 2), sorted.size(), np);
        return 0;
    }

    private List<Integer> aliveIndexes() {
        List<Integer> alive = new ArrayList<>();
        for (int i = 0; i < workers.size(); i++) {
            if (workers.get(i).isAlive()) {
                alive.add(i);
            }
        }
        return alive;
    }

    /** Waits until {@code size} live workers report steps in a ring of that size. */
    private void awaitRing(int size, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            long inRing = last.entrySet().stream().filter(e -> workers.get(e.getKey()).isAlive())
                    .filter(e -> e.getValue().size() == size).count();
            if (inRing >= size) {
                return;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the benchmark job did not reach " + size + " workers in " + seconds
                        + " s (" + inRing + " reported)");
            }
            Thread.sleep(10);
        }
    }

    /** @return seconds from the kill until every survivor completed a step of a newer generation */
    private double awaitRecovery(long genBefore, long killedAt, int survivors, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            List<Step> recovered = last.values().stream().filter(s -> s.gen() > genBefore && s.size() == survivors)
                    .toList();
            if (recovered.size() >= survivors) {
                // The first step of each survivor in the new ring: steps print in order, so take the earliest
                // recorded per worker (kept in firstAfter).
                long latest = 0;
                for (Map.Entry<Integer, Long> e : firstAfter.entrySet()) {
                    latest = Math.max(latest, e.getValue());
                }
                return (latest - killedAt) / 1000.0;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the survivors did not complete a step within " + seconds
                        + " s of the kill");
            }
            Thread.sleep(5);
        }
    }

    /** Per worker, the time of its first step in a generation newer than the one it last reported. */
    private final Map<Integer, Long> firstAfter = new ConcurrentHashMap<>();

    private void start(String job, int port) throws Exception {
        int index = workers.size();
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!arg.startsWith("-agentlib") && !arg.startsWith("-javaagent") && !arg.startsWith("-Xdebug")) {
                cmd.add(arg);
            }
        }
        cmd.addAll(List.of("-Xmx256m", "-Dorg.slf4j.simpleLogger.defaultLogLevel=error",
                "-cp", System.getProperty("java.class.path"), Launcher.WORKER_MAIN, "bench", "elastic", "--worker",
                "-np", Integer.toString(np), "--bytes", Long.toString(bytes), "--compute-ms", Long.toString(computeMs)));
        ProcessBuilder pb = new ProcessBuilder(ChildJvmOptions.withOptions(cmd)).redirectErrorStream(true);
        Map<String, String> env = pb.environment();
        env.put("KOLO_JOB", job);
        env.put("KOLO_NP", Integer.toString(np));
        env.put("KOLO_MIN_NP", "2");
        env.put("KOLO_MAX_NP", Integer.toString(np));
        env.put("KOLO_CLUSTER_PORT", Integer.toString(port));
        env.put("KOLO_METRICS_PORT", "0");
        env.put(ParentWatch.LAUNCHER_PID, Long.toString(ProcessHandle.current().pid()));
        env.remove("KOLO_CHECKPOINT_DIR");
        Process p = pb.start();
        workers.add(p);
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    if (line.startsWith(STEP)) {
                        Step s = new Step(Integer.parseInt(field(line, "size")), Long.parseLong(field(line, "gen")),
                                Long.parseLong(field(line, "t")));
                        Step before = last.put(index, s);
                        if (before != null && s.gen() > before.gen()) {
                            firstAfter.putIfAbsent(index, s.t());
                        }
                    } else if (line.startsWith("kolo:")) {
                        System.err.println("[" + index + "] " + line);
                    }
                }
            } catch (Exception ignored) {
                // the worker ended
            }
        }, "bench-elastic-out-" + index);
        reader.setDaemon(true);
        reader.start();
    }

    private static String field(String line, String name) {
        int start = line.indexOf(" " + name + "=") + name.length() + 2;
        int end = line.indexOf(' ', start);
        return end < 0 ? line.substring(start) : line.substring(start, end);
    }
}
