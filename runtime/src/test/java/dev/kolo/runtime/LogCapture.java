package dev.kolo.runtime;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Collects what is logged while open: the tests' SLF4J simple logger writes to whatever System.err is at
 * the time, so this tees System.err and keeps the lines. Tests of one JVM run one after another.
 */
public final class LogCapture implements AutoCloseable {
    private final PrintStream original = System.err;
    private final List<String> lines = new ArrayList<>();
    private final ByteArrayOutputStream partial = new ByteArrayOutputStream();

    private LogCapture() {
        System.setErr(new PrintStream(new OutputStream() {
            @Override
            public void write(int b) {
                original.write(b);
                synchronized (lines) {
                    if (b == '\n') {
                        lines.add(partial.toString(StandardCharsets.UTF_8));
                        partial.reset();
                    } else {
                        partial.write(b);
                    }
                }
            }
        }, true, StandardCharsets.UTF_8));
    }

    /** @return a capture of System.err from now until {@link #close()} */
    public static LogCapture start() {
        return new LogCapture();
    }

    /** @return the lines so far that match */
    public List<String> lines(Predicate<String> match) {
        synchronized (lines) {
            return lines.stream().filter(match).toList();
        }
    }

    /** @return the first matching line, waiting up to {@code seconds} for it */
    public String await(Predicate<String> match, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            List<String> found = lines(match);
            if (!found.isEmpty()) {
                return found.get(0);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no matching log line within " + seconds + " s");
            }
            Thread.sleep(20);
        }
    }

    /** @return every line captured so far joined, for assertions that scan all of them */
    public String all() {
        synchronized (lines) {
            return String.join("\n", lines);
        }
    }

    @Override
    public void close() {
        System.setErr(original);
    }
}
