package dev.kolo.testing;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * Child JVMs running test main classes on this JVM's class path, as a job's worker processes: every output line
 * (stdout and stderr) is kept as {@code [index] line} in arrival order, and waits for lines and exits have
 * deadlines. Closing kills every process still running.
 *
 * <p>Lines can be read three ways: {@link #lines} (all, for {@link #await} and {@link #awaitEach} from a position),
 * {@link #poll} (each line once, in order, as from a queue) and {@link #output} (one process's lines, unprefixed).
 * A process's standard input stays open (a pipe) until the test closes {@code process(index).getOutputStream()}.
 */
public final class ChildJvms implements AutoCloseable {
    /** Every line so far, as "[index] line", in arrival order. */
    public final List<String> lines = new CopyOnWriteArrayList<>();
    private final List<Process> processes = new CopyOnWriteArrayList<>();
    private final List<Thread> readers = new CopyOnWriteArrayList<>();
    private final BlockingQueue<String> unpolled = new LinkedBlockingQueue<>();

    /**
     * Starts {@code main} in a new JVM on this JVM's class path.
     *
     * @param jvmFlags flags before the class path, e.g. {@code -Xmx192m}
     * @param env variables added to this JVM's environment
     * @return the new process's index
     */
    public int start(Class<?> main, List<String> jvmFlags, Map<String, String> env, String... args)
            throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(java());
        cmd.addAll(jvmFlags);
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
        cmd.addAll(List.of(args));
        return start(cmd, env);
    }

    /**
     * Starts a command line of its own, for a JVM that does not run on this JVM's class path (another class path,
     * {@code -jar}); its output is kept as that of {@link #start(Class, List, Map, String...)}.
     *
     * @param command the whole command, {@link #java()} first
     * @param env variables added to this JVM's environment; a variable mapped to {@code null} is removed
     * @return the new process's index
     */
    public int start(List<String> command, Map<String, String> env) throws Exception {
        int index = processes.size();
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
        env.forEach((k, v) -> {
            if (v == null) {
                pb.environment().remove(k);
            } else {
                pb.environment().put(k, v);
            }
        });
        Process p = pb.start();
        processes.add(p);
        readers.add(pump(p, "child-output-" + index, line -> {
            String tagged = "[" + index + "] " + line;
            lines.add(tagged);
            unpolled.add(tagged);
        }));
        return index;
    }

    /** @return the {@code java} launcher of this JVM, which child JVMs run with */
    public static String java() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * Hands every output line of {@code p} to {@code sink}, on a daemon thread, until the output ends.
     *
     * @return the reading thread, ended once the output has
     */
    public static Thread pump(Process p, String threadName, Consumer<String> sink) {
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
        return reader;
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

    /**
     * Each line once, in arrival order, as {@link BlockingQueue#poll(long, TimeUnit)} would hand them out: for a
     * test that takes lines one at a time. Independent of {@link #lines}, which keeps every line.
     *
     * @return the next line not polled yet, or {@code null} if none arrives within the timeout
     */
    public String poll(long timeout, TimeUnit unit) throws InterruptedException {
        return unpolled.poll(timeout, unit);
    }

    /**
     * @return the exit status of process {@code index}, failing if it runs longer than {@code seconds}; its output
     *     is then read to the end (waiting up to 5 s more), so that {@link #lines} holds every line it wrote
     */
    public int waitExit(int index, double seconds) throws InterruptedException {
        Process p = processes.get(index);
        if (!p.waitFor((long) (seconds * 1000), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("process " + index + " did not exit within " + seconds + " s; last lines:\n"
                    + tail(30));
        }
        readers.get(index).join(5_000);
        return p.exitValue();
    }

    /** @return the lines of process {@code index} so far, without the {@code [index] } prefix, in order */
    public List<String> output(int index) {
        String prefix = "[" + index + "] ";
        List<String> out = new ArrayList<>();
        for (String l : lines) {
            if (l.startsWith(prefix)) {
                out.add(l.substring(prefix.length()));
            }
        }
        return out;
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
