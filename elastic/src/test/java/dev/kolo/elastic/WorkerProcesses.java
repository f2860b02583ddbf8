package dev.kolo.elastic;

import dev.kolo.testing.ChildJvms;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * Worker processes of one test job: {@link ElasticTrainWorker}s with the job's KOLO_* environment, run as
 * {@link ChildJvms} (every output line tagged with the worker's index, waits with deadlines).
 */
final class WorkerProcesses implements AutoCloseable {
    final String job = "ew-" + UUID.randomUUID().toString().substring(0, 8);
    final int clusterPort = 16000 + 20 * new java.util.Random().nextInt(200);
    private final Map<String, String> env = new ConcurrentHashMap<>();
    private final List<String> jvmProps = new ArrayList<>();
    private final ChildJvms children = new ChildJvms();
    final List<Process> processes = new CopyOnWriteArrayList<>();
    /** Every line so far, as "[index] line", in arrival order. */
    final List<String> lines = children.lines;

    WorkerProcesses(int np, int minNp, int maxNp) {
        env.put("KOLO_JOB", job);
        env.put("KOLO_NP", Integer.toString(np));
        if (minNp > 0) {
            env.put("KOLO_MIN_NP", Integer.toString(minNp));
            env.put("KOLO_MAX_NP", Integer.toString(maxNp));
        }
        env.put("KOLO_CLUSTER_PORT", Integer.toString(clusterPort));
        env.put("KOLO_METRICS_PORT", "0");
        env.put("KOLO_HEARTBEAT_TIMEOUT", "3");
        env.put("KOLO_RENDEZVOUS_TIMEOUT", "60");
    }

    WorkerProcesses env(String k, String v) {
        env.put(k, v);
        return this;
    }

    /** Leaves a setting at its default (e.g. the metrics port, off unless unset). */
    WorkerProcesses unset(String k) {
        env.remove(k);
        return this;
    }

    WorkerProcesses prop(String k, Object v) {
        jvmProps.add("-D" + k + "=" + v);
        return this;
    }

    /** Sets the training every worker runs: {@code dim} floats per step, {@code steps} steps, a pause per step. */
    WorkerProcesses training(int dim, int steps, int sleepMs) {
        return prop("ew.dim", dim).prop("ew.steps", steps).prop("ew.sleepMs", sleepMs);
    }

    /** Starts {@code n} more workers. */
    void startAll(int n) throws Exception {
        for (int i = 0; i < n; i++) {
            start();
        }
    }

    /** Starts one more worker; returns its index. */
    int start() throws Exception {
        List<String> flags = new ArrayList<>(List.of("-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dorg.slf4j.simpleLogger.log.dev.kolo.elastic=info"));
        flags.addAll(jvmProps);
        int index = children.start(ElasticTrainWorker.class, flags, env);
        processes.add(children.process(index));
        return index;
    }

    /** @return the first line at or after position {@code from} matching, waiting up to {@code seconds} */
    String await(int from, double seconds, String what, Predicate<String> match) throws InterruptedException {
        return children.await(from, seconds, what, match);
    }

    /** Waits until {@code count} distinct workers printed a line matching; returns those lines. */
    List<String> awaitEach(int from, int count, double seconds, String what, Predicate<String> match)
            throws InterruptedException {
        return children.awaitEach(from, count, seconds, what, match);
    }

    static int index(String line) {
        return ChildJvms.index(line);
    }

    static String field(String line, String name) {
        int at = line.indexOf(" " + name + "=");
        if (at < 0) {
            throw new AssertionError("no " + name + "= in: " + line);
        }
        int start = at + name.length() + 2;
        int end = line.indexOf(' ', start);
        return end < 0 ? line.substring(start) : line.substring(start, end);
    }

    long pid(int index) {
        return processes.get(index).pid();
    }

    void kill(int index) {
        processes.get(index).destroyForcibly();
    }

    void signal(int index, String sig) throws Exception {
        children.signal(index, sig);
    }

    int waitExit(int index, double seconds) throws InterruptedException {
        return children.waitExit(index, seconds);
    }

    String dump() {
        return String.join("\n", lines);
    }

    @Override
    public void close() {
        try {
            java.nio.file.Path dir = java.nio.file.Path.of("target", "ew-logs");
            java.nio.file.Files.createDirectories(dir);
            java.nio.file.Files.writeString(dir.resolve(job + ".log"), dump());
        } catch (java.io.IOException ignored) {
            // logs are a convenience
        }
        children.close();
    }
}
