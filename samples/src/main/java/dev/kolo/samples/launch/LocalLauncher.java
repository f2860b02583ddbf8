package dev.kolo.samples.launch;

import dev.kolo.runtime.Settings;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Starts and supervises the worker processes of one local job. Every worker runs this same program (same
 * java, same class path, same JVM flags) with its rank hint, the job name and the job size in its
 * environment.
 */
public final class LocalLauncher {
    /**
     * The command line's entry point, which every local worker process runs. Named as text because the
     * command line sits above this package (it lists the commands that use the launcher);
     * {@code WorkerCliTest} checks that it names the real class.
     */
    public static final String WORKER_MAIN = "dev.kolo.samples.cli.WorkerCli";

    private final String job;
    private final int np;
    private final List<String> workerArgs;
    private final long graceMillis;
    private final List<Process> workers = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final PrintStream out;
    private final OutputSink sink;
    private final List<String> extraJvmFlags;
    private final java.util.Map<String, String> extraEnvironment = new java.util.LinkedHashMap<>();
    private int minNp;
    private int maxNp;

    /** Where a worker's output line goes. */
    public interface OutputSink {
        void line(int rank, String line);
    }

    public LocalLauncher(String job, int np, List<String> workerArgs, long graceMillis) {
        this(job, np, workerArgs, graceMillis, System.out, null, List.of());
    }

    /**
     * @param status where the launcher's own lines go
     * @param sink where workers' lines go; null prefixes them with {@code [rank]} on standard output
     * @param extraJvmFlags JVM flags for the workers only
     */
    public LocalLauncher(String job, int np, List<String> workerArgs, long graceMillis, PrintStream status,
                         OutputSink sink, List<String> extraJvmFlags) {
        this.job = job;
        this.np = np;
        this.workerArgs = List.copyOf(workerArgs);
        this.graceMillis = graceMillis;
        this.out = status;
        this.sink = sink != null ? sink : (rank, line) -> {
            synchronized (System.out) {
                System.out.println("[" + rank + "] " + line);
            }
        };
        this.extraJvmFlags = List.copyOf(extraJvmFlags);
    }

    /** Sets an environment variable for the workers only; call before {@link #run()}. */
    public LocalLauncher environment(String name, String value) {
        extraEnvironment.put(name, value);
        return this;
    }

    /**
     * Makes the job elastic: the workers get {@code KOLO_MIN_NP} / {@code KOLO_MAX_NP} (0 leaves one unset), and
     * a worker that fails or is killed no longer stops the others: the job goes on without it.
     */
    public LocalLauncher elastic(int minNp, int maxNp) {
        this.minNp = minNp;
        this.maxNp = maxNp;
        return this;
    }

    private boolean elastic() {
        int min = minNp > 0 ? minNp : np;
        int max = maxNp > 0 ? maxNp : Math.max(np, min);
        return min < max;
    }

    /**
     * @return 0 if every worker exited 0, else the first failure's exit status; in an elastic job 0 if any
     *     worker finished with 0 (the job went on without the others), else the first failure's status
     */
    public int run() {
        metricsBase(); // before any worker starts: a port that does not exist for the last worker is a config error
        // A signal is the user's stop: reported as such, with the status it asks for. The hook covers the other
        // ways this JVM can end (System.exit elsewhere, SIGHUP): no worker outlives the launcher.
        Thread stopOnExit = new Thread(this::stopAll, "kolo-launch-stop");
        Runtime.getRuntime().addShutdownHook(stopOnExit);
        BlockingQueue<int[]> exits = new ArrayBlockingQueue<>(np);
        try (StopSignals signals = new StopSignals(this::stopAll)) {
            for (int rank = 0; rank < np && signals.received() == null; rank++) {
                Process p = start(rank);
                workers.add(p);
                out.printf("[launch] job %s: started worker %d (pid %d)%n", job, rank, p.pid());
                int r = rank;
                p.onExit().thenAccept(done -> exits.add(new int[] {r, done.exitValue()}));
            }
            if (signals.received() != null) {
                stopAll(); // the signal's stop may have run before the last worker was started
            }
            int firstFailure = 0;
            int succeeded = 0;
            boolean elastic = elastic();
            for (int finished = 0; finished < workers.size(); finished++) {
                int[] exit = exits.take();
                if (exit[1] == 0) {
                    succeeded++;
                } else if (signals.received() != null) {
                    continue; // stopped as asked: not a failure of the worker
                } else if (elastic) {
                    out.printf("[launch] worker %d exited with status %d; the elastic job goes on without it%n",
                            exit[0], exit[1]);
                    firstFailure = firstFailure == 0 ? exit[1] : firstFailure;
                } else if (firstFailure == 0) {
                    firstFailure = exit[1];
                    out.printf("[launch] worker %d failed with exit status %d; stopping the others%n", exit[0],
                            exit[1]);
                    stopAll();
                }
            }
            if (signals.received() != null) {
                stopAll(); // waits for a stop the signal started on another thread
                out.printf("[launch] job %s: stopped by %s (%d of %d workers had finished)%n", job,
                        signals.received(), succeeded, np);
                out.flush();
                return signals.exitStatus();
            }
            int status = elastic && succeeded > 0 ? 0 : firstFailure;
            out.printf("[launch] job %s: %s%n", job, status != 0 ? "failed" : succeeded == np
                    ? "all " + np + " workers done" : succeeded + " of " + np + " workers done (elastic)");
            return status;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            stopAll();
            return 130;
        } finally {
            try {
                Runtime.getRuntime().removeShutdownHook(stopOnExit);
            } catch (IllegalStateException shuttingDown) {
                // the hook is running already
            }
        }
    }

    private Process start(int rank) {
        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmFlags());
        command.addAll(extraJvmFlags);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(WORKER_MAIN);
        command.addAll(workerArgs);
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        pb.environment().put("KOLO_JOB", job);
        pb.environment().put("KOLO_NP", Integer.toString(np));
        pb.environment().put("KOLO_RANK_HINT", Integer.toString(rank));
        if (minNp > 0) {
            pb.environment().put("KOLO_MIN_NP", Integer.toString(minNp));
        }
        if (maxNp > 0) {
            pb.environment().put("KOLO_MAX_NP", Integer.toString(maxNp));
        }
        // One metrics endpoint per worker: the base port plus the rank (0 keeps them all off).
        int metricsBase = metricsBase();
        pb.environment().put("KOLO_METRICS_PORT", Integer.toString(metricsBase == 0 ? 0 : metricsBase + rank));
        pb.environment().put(ParentWatch.LAUNCHER_PID, Long.toString(ProcessHandle.current().pid()));
        pb.environment().putAll(extraEnvironment);
        try {
            Process p = pb.start();
            p.getOutputStream().close();
            pump(rank, p);
            return p;
        } catch (IOException e) {
            stopAll();
            throw new IllegalStateException("cannot start worker " + rank + ": " + e.getMessage(), e);
        }
    }

    /**
     * The first worker's metrics port (the launcher's own {@code KOLO_METRICS_PORT}); worker r gets this plus r,
     * so every worker's port must exist.
     */
    private int metricsBase() {
        int base = Settings.METRICS_PORT.fromEnvironment().orElse(Settings.METRICS_PORT.defaultValue());
        if (base != 0 && base + np - 1 > 65535) {
            throw new IllegalArgumentException("KOLO_METRICS_PORT " + base + " leaves no port for worker " + (np - 1)
                    + " of " + np + " (launch gives worker r the port " + base + " + r): use at most "
                    + (65536 - np) + ", or 0 to turn the metrics endpoints off");
        }
        return base;
    }

    /** The launcher's own JVM flags (heap size, --add-opens, -D settings) apply to every worker. */
    private static List<String> jvmFlags() {
        List<String> flags = new ArrayList<>();
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!arg.startsWith("-agentlib") && !arg.startsWith("-javaagent") && !arg.startsWith("-Xdebug")) {
                flags.add(arg);
            }
        }
        // From the jar manifest (Add-Opens) when run with -jar: make them explicit for -cp.
        flags.addAll(List.of("--add-opens", "java.base/java.lang=ALL-UNNAMED",
                "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
                "--add-opens", "java.management/sun.management=ALL-UNNAMED",
                "--add-opens", "jdk.management/com.sun.management.internal=ALL-UNNAMED",
                "--add-exports", "java.base/jdk.internal.ref=ALL-UNNAMED"));
        if (Runtime.version().feature() >= 24) {
            // Hazelcast still uses sun.misc.Unsafe; JDK 24+ warns about it unless allowed (JDK 17 lacks the flag).
            flags.add("--sun-misc-unsafe-memory-access=allow");
            flags.add("--enable-native-access=ALL-UNNAMED");
        }
        return flags;
    }

    private void pump(int rank, Process p) {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    sink.line(rank, line);
                }
            } catch (IOException ignored) {
                // the worker's output closed: it has exited
            }
        }, "kolo-launch-output-" + rank);
        t.setDaemon(true);
        t.start();
    }

    /** SIGTERM to every live worker, then SIGKILL after the grace period. Safe to call twice. */
    private synchronized void stopAll() {
        List<Process> alive = new ArrayList<>();
        for (Process p : workers) {
            if (p.isAlive()) {
                p.destroy();
                alive.add(p);
            }
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(graceMillis);
        for (Process p : alive) {
            try {
                long left = deadline - System.nanoTime();
                if (!p.waitFor(Math.max(0, left), TimeUnit.NANOSECONDS)) {
                    p.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
