package dev.kolo.samples.launch;

import dev.kolo.runtime.Settings;
import dev.kolo.runtime.jvm.JvmOptions;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * Starts and supervises the worker processes of one job: on this machine, or on other hosts over SSH. Each
 * worker runs a command (by default the sample worker: this same program, with the same java, class path and
 * JVM flags), given Kolo's JVM options ({@link ChildJvmOptions}: the program needs none of its own), under
 * {@link WorkerWrapper}, with the environment that makes {@code Kolo.init()} join this job:
 * job name and size, elastic bounds, a rank hint, discovery (local here; {@code members} across hosts) and its
 * ports; the job's secret reaches it on standard input. The first failure of a fixed job, Ctrl-C or SIGTERM
 * stops every worker on every host; an elastic job goes on without a failed worker.
 */
public final class Launcher {
    /**
     * The command line's entry point, which every sample worker process runs. Named as text because the
     * command line sits above this package (it lists the commands that use the launcher);
     * {@code WorkerCliTest} checks that it names the real class.
     */
    public static final String WORKER_MAIN = "dev.kolo.samples.cli.WorkerCli";
    /** SSH options the launcher always sets: never prompt, and notice a lost connection within 15 s. */
    static final List<String> SSH_DEFAULTS = List.of("-o", "BatchMode=yes", "-o", "ConnectTimeout=10",
            "-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3");
    /** How much longer than the grace period a stopping worker on another host may take (its SSH round trip). */
    static final long REMOTE_STOP_SLACK_MILLIS = 5000;
    /** The status of an SSH client whose connection failed or was lost. */
    static final int SSH_FAILED = 255;

    /** Where a worker's output line goes. */
    public interface OutputSink {
        void line(int rank, String line);
    }

    private final String job;
    private final int np;
    private final int minNp;
    private final int maxNp;
    private final List<String> command;
    /** Kolo's JVM options for a command that is not {@code java} itself, through {@code JDK_JAVA_OPTIONS}. */
    private final List<String> jdkJavaOptions;
    private final List<HostSlots.Placement> placements;
    private final List<String> ssh;
    private final long graceMillis;
    private final PrintStream out;
    private final OutputSink sink;
    private final Map<String, String> extraEnvironment;
    private final String secret;
    private final List<Worker> workers = new CopyOnWriteArrayList<>();

    /** One started worker: its process (the worker itself here, its SSH client for another host) and input. */
    private record Worker(int rank, String host, Process process, OutputStream input) {
        void closeInput() {
            try {
                input.close();
            } catch (IOException ignored) {
                // the process has gone: its input is closed already
            }
        }
    }

    private Launcher(Builder b) {
        this.job = b.job;
        this.np = b.np;
        this.minNp = b.minNp;
        this.maxNp = b.maxNp;
        List<String> cmd = b.command != null ? b.command : sampleWorker(b.workerArgs, b.jvmFlags);
        // A user's program needs no JVM flags of its own: java gets Kolo's options it lacks, a script through the
        // variable every java launcher reads.
        this.command = ChildJvmOptions.withOptions(cmd);
        this.jdkJavaOptions = ChildJvmOptions.runsJava(cmd) ? List.of() : JvmOptions.all();
        this.placements = HostSlots.place(b.hosts, b.np);
        // ssh takes the first value given for an option: the user's come first, so they override the defaults.
        List<String> sshCommand = new ArrayList<>(List.of("ssh"));
        b.sshOptions.forEach(o -> sshCommand.addAll(List.of("-o", o)));
        sshCommand.addAll(SSH_DEFAULTS);
        this.ssh = List.copyOf(sshCommand);
        this.graceMillis = b.graceMillis;
        this.out = b.status;
        this.sink = b.sink != null ? b.sink : (rank, line) -> {
            synchronized (System.out) {
                System.out.println("[" + rank + "] " + line);
            }
        };
        this.extraEnvironment = Map.copyOf(b.environment);
        this.secret = b.secret;
    }

    /** @return a launch of {@code np} workers of job {@code job} */
    public static Builder builder(String job, int np) {
        return new Builder(job, np);
    }

    /** What to launch, where, and how to report it. */
    public static final class Builder {
        private final String job;
        private final int np;
        private int minNp;
        private int maxNp;
        private List<String> command;
        private List<String> workerArgs = List.of();
        private List<String> jvmFlags = List.of();
        private List<HostSlots.Host> hosts = List.of();
        private List<String> sshOptions = List.of();
        private long graceMillis = 5000;
        private PrintStream status = System.out;
        private OutputSink sink;
        private final Map<String, String> environment = new LinkedHashMap<>();
        private String secret;

        private Builder(String job, int np) {
            this.job = job;
            this.np = np;
        }

        /** Runs {@code command} as every worker instead of the sample worker. */
        public Builder command(List<String> command) {
            this.command = command.isEmpty() ? null : List.copyOf(command);
            return this;
        }

        /** Options for the sample worker (when no command is given). */
        public Builder workerArgs(List<String> args) {
            this.workerArgs = List.copyOf(args);
            return this;
        }

        /** JVM flags for the sample worker only. */
        public Builder jvmFlags(List<String> flags) {
            this.jvmFlags = List.copyOf(flags);
            return this;
        }

        /** The hosts and their slots; none (the default) starts every worker on this machine. */
        public Builder hosts(List<HostSlots.Host> hosts) {
            this.hosts = List.copyOf(hosts);
            return this;
        }

        /** Options for the SSH client, each passed as {@code -o OPTION}. */
        public Builder sshOptions(List<String> options) {
            this.sshOptions = List.copyOf(options);
            return this;
        }

        /**
         * Makes the job elastic: the workers get {@code KOLO_MIN_NP} / {@code KOLO_MAX_NP} (0 leaves one unset),
         * and a worker that fails or is killed no longer stops the others: the job goes on without it.
         */
        public Builder elastic(int minNp, int maxNp) {
            this.minNp = minNp;
            this.maxNp = maxNp;
            return this;
        }

        /** How long workers get to stop after SIGTERM before they are killed. */
        public Builder graceMillis(long millis) {
            this.graceMillis = millis;
            return this;
        }

        /** Where the launcher's own lines go (default: standard output). */
        public Builder status(PrintStream status) {
            this.status = status;
            return this;
        }

        /** Where workers' lines go (default: standard output, prefixed with {@code [rank]}). */
        public Builder sink(OutputSink sink) {
            this.sink = sink;
            return this;
        }

        /** Sets an environment variable for every worker. */
        public Builder environment(String name, String value) {
            environment.put(name, value);
            return this;
        }

        /** The job's secret, handed to every worker on its standard input; null (the default) for none. */
        public Builder secret(String secret) {
            this.secret = secret;
            return this;
        }

        /** @throws IllegalArgumentException if the hosts cannot hold {@code np} workers */
        public Launcher build() {
            return new Launcher(this);
        }
    }

    private boolean elastic() {
        int min = minNp > 0 ? minNp : np;
        int max = maxNp > 0 ? maxNp : Math.max(np, min);
        return min < max;
    }

    private boolean acrossHosts() {
        return placements.get(0).host() != null;
    }

    /**
     * @return 0 if every worker exited 0, else the first failure's exit status; in an elastic job 0 if any
     *     worker finished with 0 (the job went on without the others), else the first failure's status
     */
    public int run() {
        // Before any worker starts: a port that does not exist for the last worker of a host is a config error.
        HostPorts.base(Settings.METRICS_PORT, perHost(), "to turn the metrics endpoints off");
        HostPorts.base(Settings.DATA_PORT, perHost(), "for any free port");
        if (acrossHosts()) {
            HostPorts.base(Settings.CLUSTER_PORT, perHost(), null);
        }
        // A signal is the user's stop: reported as such, with the status it asks for. The hook covers the other
        // ways this JVM can end (System.exit elsewhere, SIGHUP): no worker outlives the launcher.
        Thread stopOnExit = new Thread(this::stopAll, "kolo-launch-stop");
        Runtime.getRuntime().addShutdownHook(stopOnExit);
        BlockingQueue<int[]> exits = new ArrayBlockingQueue<>(np);
        try (StopSignals signals = new StopSignals(this::stopAll)) {
            for (HostSlots.Placement place : placements) {
                if (signals.received() != null) {
                    break;
                }
                Worker w = start(place);
                workers.add(w);
                out.printf("[launch] job %s: started worker %d %s%n", job, place.rank(), place.host() == null
                        ? "(pid " + w.process().pid() + ")" : "on " + place.host() + " (ssh pid " + w.process().pid()
                                + ")");
                w.process().onExit().thenAccept(done -> {
                    w.closeInput();
                    exits.add(new int[] {w.rank(), done.exitValue()});
                });
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
                    out.printf("[launch] worker %d %s; the elastic job goes on without it%n", exit[0],
                            failure(exit[0], exit[1], "exited with status"));
                    firstFailure = firstFailure == 0 ? exit[1] : firstFailure;
                } else if (firstFailure == 0) {
                    firstFailure = exit[1];
                    out.printf("[launch] worker %d %s; stopping the others%n", exit[0],
                            failure(exit[0], exit[1], "failed with exit status"));
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

    private String failure(int rank, int status, String what) {
        String host = placements.get(rank).host();
        if (host != null && status == SSH_FAILED) {
            return "on " + host + ": " + what + " 255 from ssh (the connection failed or was lost, or the worker "
                    + "exited 255)";
        }
        return what + " " + status + (host != null ? " on " + host : "");
    }

    private Worker start(HostSlots.Placement place) {
        Map<String, String> env = workerEnvironment(place);
        List<String> cmd = place.host() == null ? WorkerWrapper.local(command, jdkJavaOptions, graceMillis)
                : WorkerWrapper.remote(ssh, place.host(), Paths.get("").toAbsolutePath().toString(), env, command,
                        jdkJavaOptions, graceMillis);
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        if (place.host() == null) {
            pb.environment().putAll(env);
        }
        try {
            Process p = pb.start();
            OutputStream input = p.getOutputStream();
            input.write(((secret == null ? "" : secret) + "\n").getBytes(StandardCharsets.UTF_8));
            input.flush();
            pump(place.rank(), p);
            return new Worker(place.rank(), place.host(), p, input);
        } catch (IOException e) {
            stopAll();
            throw new IllegalStateException("cannot start worker " + place.rank() + (place.host() == null ? ""
                    : " on " + place.host()) + ": " + e.getMessage(), e);
        }
    }

    /** The variables that make {@code Kolo.init()} join this job as the worker placed at {@code place}. */
    Map<String, String> workerEnvironment(HostSlots.Placement place) {
        Map<String, String> env = new LinkedHashMap<>();
        if (place.host() != null) {
            // The launcher's own settings apply on every host (here they are inherited); the secret never travels
            // on a command line.
            System.getenv().forEach((k, v) -> {
                if (k.startsWith("KOLO_") && !k.equals(Settings.JOB_SECRET.name())
                        && !k.equals(Settings.JOB_SECRET_FILE.name())) {
                    env.put(k, v);
                }
            });
        }
        env.put(Settings.JOB.name(), job);
        env.put(Settings.NP.name(), Integer.toString(np));
        env.put(Settings.RANK_HINT.name(), Integer.toString(place.rank()));
        if (minNp > 0) {
            env.put(Settings.MIN_NP.name(), Integer.toString(minNp));
        }
        if (maxNp > 0) {
            env.put(Settings.MAX_NP.name(), Integer.toString(maxNp));
        }
        // One metrics endpoint per worker of a host: the base port plus the worker's index there (0: all off).
        // Here, with no port set, each worker takes the default and moves up to a free one, so that two launches
        // on one machine never collide.
        if (place.host() != null || Settings.METRICS_PORT.fromEnvironment().isPresent()) {
            env.put(Settings.METRICS_PORT.name(), Integer.toString(HostPorts.of(HostPorts.base(Settings.METRICS_PORT,
                    perHost(), "to turn the metrics endpoints off"), place.localIndex())));
        }
        // A data port set for the job (for a firewall between hosts) is the first of a range on every host.
        if (Settings.DATA_PORT.fromEnvironment().orElse(0) != 0) {
            env.put(Settings.DATA_PORT.name(), Integer.toString(HostPorts.of(HostPorts.base(Settings.DATA_PORT,
                    perHost(), "for any free port"), place.localIndex())));
        }
        if (place.host() == null) {
            env.put(ParentWatch.LAUNCHER_PID, Long.toString(ProcessHandle.current().pid()));
        } else {
            int clusterBase = HostPorts.base(Settings.CLUSTER_PORT, perHost(), null);
            List<String> members = new ArrayList<>();
            for (HostSlots.Placement p : placements) {
                members.add(hostPort(p.host(), clusterBase + p.localIndex()));
            }
            env.put(Settings.DISCOVERY.name(), "members");
            env.put(Settings.MEMBERS.name(), String.join(",", members));
            env.put(Settings.HOST.name(), place.host());
            env.put(Settings.CLUSTER_PORT.name(), Integer.toString(clusterBase + place.localIndex()));
        }
        env.putAll(extraEnvironment);
        return env;
    }

    private static String hostPort(String host, int port) {
        return (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
    }

    /** @return the most workers any host runs: the length of each host's range of ports */
    private int perHost() {
        return placements.stream().mapToInt(p -> p.localIndex() + 1).max().orElse(1);
    }

    /** The sample worker: this program, run again with the same java, class path and JVM flags. */
    private static List<String> sampleWorker(List<String> workerArgs, List<String> extraJvmFlags) {
        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmFlags());
        command.addAll(extraJvmFlags);
        command.add("-cp");
        command.add(absoluteClassPath());
        command.add(WORKER_MAIN);
        command.addAll(workerArgs);
        return command;
    }

    /** The class path with absolute entries, so that a worker started in another directory finds it. */
    public static String absoluteClassPath() {
        List<String> entries = new ArrayList<>();
        for (String e : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
            entries.add(e.isEmpty() ? e : Path.of(e).toAbsolutePath().toString());
        }
        return String.join(java.io.File.pathSeparator, entries);
    }

    /**
     * The launcher's own JVM flags (heap size, -D settings) apply to every worker; Kolo's JVM options, which the
     * worker jar's manifest gives the launcher, are added to the command as to any other.
     */
    private static List<String> jvmFlags() {
        List<String> flags = new ArrayList<>();
        for (String arg : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (!arg.startsWith("-agentlib") && !arg.startsWith("-javaagent") && !arg.startsWith("-Xdebug")
                    && !isSecretFlag(arg)) {
                flags.add(arg);
            }
        }
        return flags;
    }

    /**
     * A flag that names the job's secret or its file: never copied to a worker's command line (visible to all in
     * {@code ps}); the worker gets the secret the launcher settled on, on its standard input.
     */
    static boolean isSecretFlag(String arg) {
        return arg.startsWith("-D" + Settings.JOB_SECRET.property() + "=")
                || arg.startsWith("-D" + Settings.JOB_SECRET_FILE.property() + "=");
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

    /**
     * Stops every live worker: SIGTERM here, end of input everywhere (the wrapper then sends SIGTERM, and SIGKILL
     * after the grace period); a process still there after the grace period (and an SSH round trip) is killed.
     * Safe to call twice.
     */
    private synchronized void stopAll() {
        List<Worker> alive = new ArrayList<>();
        for (Worker w : workers) {
            if (w.process().isAlive()) {
                if (w.host() == null) {
                    w.process().destroy();
                }
                w.closeInput();
                alive.add(w);
            }
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(graceMillis
                + (acrossHosts() ? REMOTE_STOP_SLACK_MILLIS : 0));
        for (Worker w : alive) {
            try {
                long left = deadline - System.nanoTime();
                if (!w.process().waitFor(Math.max(0, left), TimeUnit.NANOSECONDS)) {
                    w.process().destroyForcibly().waitFor(5, TimeUnit.SECONDS);
                }
            } catch (InterruptedException e) {
                w.process().destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
