package dev.kolo.elastic;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Worker processes of one test job: starts {@link ElasticTrainWorker}s with the job's KOLO_* environment,
 * keeps every output line (tagged with the worker's index), and waits for lines with deadlines.
 */
final class WorkerProcesses implements AutoCloseable {
    final String job = "ew-" + UUID.randomUUID().toString().substring(0, 8);
    final int clusterPort = 16000 + 20 * new java.util.Random().nextInt(200);
    private final Map<String, String> env = new ConcurrentHashMap<>();
    private final List<String> jvmProps = new ArrayList<>();
    final List<Process> processes = new CopyOnWriteArrayList<>();
    /** Every line so far, as "[index] line", in arrival order. */
    final List<String> lines = new CopyOnWriteArrayList<>();

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

    WorkerProcesses prop(String k, Object v) {
        jvmProps.add("-D" + k + "=" + v);
        return this;
    }

    /** Starts one more worker; returns its index. */
    int start() throws Exception {
        int index = processes.size();
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-Dorg.slf4j.simpleLogger.log.dev.kolo.elastic=info"));
        cmd.addAll(jvmProps);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), ElasticTrainWorker.class.getName()));
        ProcessBuilder pb = new ProcessBuilder(cmd);
        pb.environment().putAll(env);
        pb.redirectErrorStream(true);
        Process p = pb.start();
        processes.add(p);
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    lines.add("[" + index + "] " + line);
                    if (Boolean.getBoolean("ew.echo")) {
                        System.out.println("[" + index + "] " + line);
                    }
                }
            } catch (Exception ignored) {
                // ended
            }
        }, "ew-out-" + index);
        reader.setDaemon(true);
        reader.start();
        return index;
    }

    /** @return the first line at or after position {@code from} matching, waiting up to {@code seconds} */
    String await(int from, double seconds, String what, Predicate<String> match) throws InterruptedException {
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        int i = from;
        while (true) {
            while (i < lines.size()) {
                String l = lines.get(i++);
                if (match.test(l)) {
                    return l;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + seconds + " s waiting for " + what + "; last lines:\n"
                        + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size())));
            }
            Thread.sleep(20);
        }
    }

    /** Waits until {@code count} distinct workers printed a line matching; returns those lines. */
    List<String> awaitEach(int from, int count, double seconds, String what, Predicate<String> match)
            throws InterruptedException {
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        Map<Integer, String> seen = new java.util.TreeMap<>();
        int i = from;
        while (seen.size() < count) {
            while (i < lines.size()) {
                String l = lines.get(i++);
                if (match.test(l)) {
                    seen.putIfAbsent(index(l), l);
                }
            }
            if (seen.size() >= count) {
                break;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + seconds + " s waiting for " + what + " from " + count
                        + " workers (got " + seen.keySet() + "); last lines:\n"
                        + String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size())));
            }
            Thread.sleep(20);
        }
        return new ArrayList<>(seen.values());
    }

    static int index(String line) {
        return Integer.parseInt(line.substring(1, line.indexOf(']')));
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
        Process k = new ProcessBuilder("kill", "-" + sig, Long.toString(pid(index))).inheritIO().start();
        if (!k.waitFor(10, TimeUnit.SECONDS) || k.exitValue() != 0) {
            throw new AssertionError("kill -" + sig + " " + pid(index) + " failed");
        }
    }

    int waitExit(int index, double seconds) throws InterruptedException {
        Process p = processes.get(index);
        if (!p.waitFor((long) (seconds * 1000), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("worker " + index + " did not exit within " + seconds + " s; last lines:\n"
                    + String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size())));
        }
        return p.exitValue();
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
        for (Process p : processes) {
            p.destroyForcibly();
        }
        for (Process p : processes) {
            try {
                p.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
