package dev.kolo.testing;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Child JVMs running test main classes on this JVM's class path, as a job's worker processes: every output line
 * (stdout and stderr) is kept as {@code [index] line} in arrival order, and waits for lines and exits have
 * deadlines. Closing kills every process still running.
 */
public final class ChildJvms implements AutoCloseable {
    /** Every line so far, as "[index] line", in arrival order. */
    public final List<String> lines = new CopyOnWriteArrayList<>();
    private final List<Process> processes = new CopyOnWriteArrayList<>();

    /**
     * Starts {@code main} in a new JVM.
     *
     * @param jvmFlags flags before the class path, e.g. {@code -Xmx192m}
     * @param env variables added to this JVM's environment
     * @return the new process's index
     */
    public int start(Class<?> main, List<String> jvmFlags, Map<String, String> env, String... args)
            throws Exception {
        int index = processes.size();
        List<String> cmd = new ArrayList<>();
        cmd.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmFlags);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().putAll(env);
        Process p = pb.start();
        processes.add(p);
        pump(p, "child-output-" + index, line -> lines.add("[" + index + "] " + line));
        return index;
    }

    /** Hands every output line of {@code p} to {@code sink}, on a daemon thread, until the output ends. */
    public static void pump(Process p, String threadName, java.util.function.Consumer<String> sink) {
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line; (line = r.readLine()) != null; ) {
                    sink.accept(line);
                }
            } catch (Exception ended) {
                // the process is gone
            }
        }, threadName);
        reader.setDaemon(true);
        reader.start();
    }

    public Process process(int index) {
        return processes.get(index);
    }

    /** @return the first line at or after position {@code from} matching, waiting up to {@code seconds} */
    public String await(int from, double seconds, String what, Predicate<String> match) throws InterruptedException {
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
                        + tail(40));
            }
            Thread.sleep(20);
        }
    }

    /** Waits until {@code count} distinct processes printed a line matching; returns those lines. */
    public List<String> awaitEach(int from, int count, double seconds, String what, Predicate<String> match)
            throws InterruptedException {
        long deadline = System.nanoTime() + (long) (seconds * 1e9);
        Map<Integer, String> seen = new TreeMap<>();
        int i = from;
        while (true) {
            while (i < lines.size()) {
                String l = lines.get(i++);
                if (match.test(l)) {
                    seen.putIfAbsent(index(l), l);
                }
            }
            if (seen.size() >= count) {
                return new ArrayList<>(seen.values());
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out after " + seconds + " s waiting for " + what + " from " + count
                        + " processes (got " + seen.keySet() + "); last lines:\n" + tail(40));
            }
            Thread.sleep(20);
        }
    }

    /** @return the exit status of process {@code index}, failing if it runs longer than {@code seconds} */
    public int waitExit(int index, double seconds) throws InterruptedException {
        Process p = processes.get(index);
        if (!p.waitFor((long) (seconds * 1000), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("process " + index + " did not exit within " + seconds + " s; last lines:\n"
                    + tail(30));
        }
        return p.exitValue();
    }

    /** Sends a signal ({@code KILL}, {@code TERM}, {@code STOP}, ...) to process {@code index}. */
    public void signal(int index, String signal) throws Exception {
        Process k = new ProcessBuilder("kill", "-" + signal, Long.toString(processes.get(index).pid())).inheritIO()
                .start();
        if (!k.waitFor(10, TimeUnit.SECONDS) || k.exitValue() != 0) {
            throw new AssertionError("kill -" + signal + " " + processes.get(index).pid() + " failed");
        }
    }

    /** @return the index of the process that printed {@code line} */
    public static int index(String line) {
        return Integer.parseInt(line.substring(1, line.indexOf(']')));
    }

    public String tail(int count) {
        return String.join("\n", lines.subList(Math.max(0, lines.size() - count), lines.size()));
    }

    @Override
    public void close() {
        for (Process p : processes) {
            p.destroyForcibly();
        }
        for (Process p : processes) {
            try {
                p.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
