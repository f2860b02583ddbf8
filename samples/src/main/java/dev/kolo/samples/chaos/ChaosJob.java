package dev.kolo.samples.chaos;

import dev.kolo.samples.console.Progress;
import dev.kolo.samples.launch.ChildJvmOptions;
import dev.kolo.samples.launch.Launcher;
import dev.kolo.samples.launch.ParentWatch;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Predicate;

/**
 * The worker processes of one job of the chaos suite: each runs this program's {@code WorkerCli} (the sample
 * training worker) with the job's settings in its environment; their output is collected line by line. Every
 * wait is bounded by the scenario's deadline, and {@link #close()} SIGKILLs whatever is still alive.
 */
final class ChaosJob implements AutoCloseable {
    /** One worker process and what it printed. */
    static final class Worker {
        final String name;
        final int rankHint;
        final Process process;
        final List<String> out = Collections.synchronizedList(new ArrayList<>());
        final List<String> err = Collections.synchronizedList(new ArrayList<>());

        Worker(String name, int rankHint, Process process) {
            this.name = name;
            this.rankHint = rankHint;
            this.process = process;
        }

        boolean printed(Predicate<String> match) {
            synchronized (out) {
                return out.stream().anyMatch(match);
            }
        }

        List<String> lines() {
            synchronized (out) {
                return List.copyOf(out);
            }
        }

        /** The last lines of stdout and stderr, for a failure's detail. */
        String tail() {
            List<String> o = lines();
            List<String> e;
            synchronized (err) {
                e = List.copyOf(err);
            }
            return name + " stdout: " + String.join(" / ", o.subList(Math.max(0, o.size() - 3), o.size()))
                    + "; stderr: " + String.join(" / ", e.subList(Math.max(0, e.size() - 2), e.size()));
        }

        /** Waits until this worker printed a matching line. */
        void await(ChaosJob job, String what, Predicate<String> match) throws ChaosFailure, InterruptedException {
            job.await(what, () -> printed(match) || !process.isAlive());
            if (!printed(match)) {
                throw new ChaosFailure(name + " exited " + process.exitValue() + " before " + what + ": " + tail());
            }
        }

        /** Sends a signal by name (STOP, CONT, TERM, KILL) with kill(1). */
        void signal(String sig) throws IOException, InterruptedException {
            new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid())).inheritIO().start()
                    .waitFor(10, TimeUnit.SECONDS);
        }
    }

    final String name = "chaos-" + UUID.randomUUID().toString().substring(0, 8);
    private final long deadlineNanos;
    private final Map<String, String> env = new LinkedHashMap<>();
    private final List<String> trainArgs;
    private final List<Worker> workers = Collections.synchronizedList(new ArrayList<>());

    /**
     * @param np KOLO_NP; {@code minNp}/{@code maxNp} 0 for a fixed job
     * @param deadlineNanos the scenario's deadline ({@link System#nanoTime()})
     */
    ChaosJob(int np, int minNp, int maxNp, List<String> trainArgs, long deadlineNanos) {
        this.deadlineNanos = deadlineNanos;
        this.trainArgs = List.copyOf(trainArgs);
        env.put("KOLO_JOB", name);
        env.put("KOLO_NP", Integer.toString(np));
        if (minNp > 0) {
            env.put("KOLO_MIN_NP", Integer.toString(minNp));
            env.put("KOLO_MAX_NP", Integer.toString(maxNp > 0 ? maxNp : np));
        }
        // A fresh cluster port range per job: jobs of this suite (and others' tests) never meet.
        env.put("KOLO_CLUSTER_PORT", Integer.toString(20000 + 20 * new Random().nextInt(1500)));
        env.put("KOLO_METRICS_PORT", "0");
        env.put(ParentWatch.LAUNCHER_PID, Long.toString(ProcessHandle.current().pid()));
    }

    /** Sets an environment variable for the workers started from now on. */
    ChaosJob env(String name, String value) {
        env.put(name, value);
        return this;
    }

    /** Starts a worker asking for rank {@code rankHint}, with the job's training flags plus {@code extraArgs}. */
    Worker start(int rankHint, String... extraArgs) throws IOException {
        return start(List.of(), rankHint, List.of(extraArgs));
    }

    /**
     * As {@link #start(int, String...)}, behind a command {@code prefix} (e.g. {@code ip netns exec NS}, which
     * execs the JVM in place: the process handle is the worker's).
     */
    Worker start(List<String> prefix, int rankHint, List<String> extraArgs) throws IOException {
        List<String> java = new ArrayList<>();
        java.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!arg.startsWith("-agentlib") && !arg.startsWith("-javaagent") && !arg.startsWith("-Xdebug")
                    && !arg.startsWith("-Xmx")) {
                java.add(arg);
            }
        }
        java.addAll(List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-cp", Launcher.absoluteClassPath(), Launcher.WORKER_MAIN));
        java.addAll(trainArgs);
        java.addAll(extraArgs);
        List<String> cmd = new ArrayList<>(prefix);
        cmd.addAll(ChildJvmOptions.withOptions(java));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().keySet().removeIf(k -> k.startsWith("KOLO_"));
        pb.environment().putAll(env);
        pb.environment().put("KOLO_RANK_HINT", Integer.toString(rankHint));
        Process p = pb.start();
        p.getOutputStream().close();
        Worker w = new Worker("w" + workers.size(), rankHint, p);
        workers.add(w);
        collect(p.getInputStream(), w.out);
        collect(p.getErrorStream(), w.err);
        return w;
    }

    List<Worker> workers() {
        synchronized (workers) {
            return List.copyOf(workers);
        }
    }

    List<Worker> alive() {
        return workers().stream().filter(w -> w.process.isAlive()).toList();
    }

    /** Waits until {@code condition} holds; fails with "timed out: what" at the scenario's deadline. */
    void await(String what, BooleanSupplier condition) throws ChaosFailure, InterruptedException {
        long start = System.nanoTime();
        // Scenarios run for minutes: say what is awaited (on stderr, so that --json output stays clean).
        Progress progress = Progress.on(System.err);
        while (!condition.getAsBoolean()) {
            long now = System.nanoTime();
            if (progress.due()) {
                progress.show((double) (now - start) / Math.max(1, deadlineNanos - start), String.format(
                        java.util.Locale.ROOT, "chaos: waiting for %s for %d s (scenario deadline in %d s)", what,
                        (now - start) / 1_000_000_000L, Math.max(0, (deadlineNanos - now) / 1_000_000_000L)));
            }
            if (now > deadlineNanos) {
                progress.done();
                StringBuilder d = new StringBuilder("timed out (hang?) waiting for " + what);
                for (Worker w : workers()) {
                    d.append(" | ").append(w.tail());
                }
                throw new ChaosFailure(d.toString());
            }
            Thread.sleep(20);
        }
        progress.done();
    }

    /** Waits for a worker's exit and returns its status. */
    int exitOf(Worker w) throws ChaosFailure, InterruptedException {
        await(w.name + " to exit", () -> !w.process.isAlive());
        return w.process.exitValue();
    }

    /** Waits until every worker has exited. */
    void awaitAllExited() throws ChaosFailure, InterruptedException {
        await("every worker to exit", () -> alive().isEmpty());
        Thread.sleep(200); // let the readers drain the pipes
    }

    /** True when {@code n} live workers have printed a step line of size {@code size} in their latest line. */
    boolean stepping(int n, int size, long minStep) {
        int ok = 0;
        for (Worker w : alive()) {
            List<String> lines = w.lines();
            for (int i = lines.size() - 1; i >= 0; i--) {
                Map<String, String> f = ChaosLog.fields(ChaosLog.STEP, lines.get(i), "step", "epoch", "size", "gen");
                if (!f.isEmpty()) {
                    if (Integer.parseInt(f.get("size")) == size && Long.parseLong(f.get("step")) >= minStep) {
                        ok++;
                    }
                    break;
                }
            }
        }
        return ok >= n;
    }

    ChaosLog log() {
        ChaosLog log = new ChaosLog();
        for (Worker w : workers()) {
            log.add(w.name, w.lines());
        }
        return log;
    }

    @Override
    public void close() {
        for (Worker w : workers()) {
            if (w.process.isAlive()) {
                try {
                    w.signal("CONT"); // a stopped process cannot die of SIGKILL until continued on some kernels
                } catch (Exception ignored) {
                    // it is being killed anyway
                }
            }
            w.process.descendants().forEach(ProcessHandle::destroyForcibly);
            w.process.destroyForcibly();
        }
        for (Worker w : workers()) {
            try {
                w.process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        keepLogs();
    }

    /** With {@code -Dkolo.chaos.logs=DIR}, each worker's output is kept as {@code DIR/<job>-<worker>.log}. */
    private void keepLogs() {
        String dir = System.getProperty("kolo.chaos.logs");
        if (dir == null || dir.isBlank()) {
            return;
        }
        for (Worker w : workers()) {
            List<String> text = new ArrayList<>(w.lines());
            synchronized (w.err) {
                text.add("--- stderr");
                text.addAll(w.err);
            }
            try {
                java.nio.file.Files.createDirectories(Paths.get(dir));
                java.nio.file.Files.write(Paths.get(dir, name + "-" + w.name + ".log"), text, StandardCharsets.UTF_8);
            } catch (IOException e) {
                System.err.println("bench chaos: cannot keep the log of " + w.name + " in " + dir + ": " + e);
            }
        }
    }

    private static void collect(InputStream in, List<String> into) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    into.add(line);
                }
            } catch (IOException ignored) {
                // the worker is gone
            }
        }, "chaos-output");
        t.setDaemon(true);
        t.start();
    }
}
