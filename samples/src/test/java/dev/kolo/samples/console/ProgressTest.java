package dev.kolo.samples.console;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** Lines at the interval in pipes, a bar redrawn in place on a terminal; the test process is not a terminal. */
class ProgressTest {
    final AtomicLong now = new AtomicLong(1_000);
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    final PrintStream out = new PrintStream(bytes, true, StandardCharsets.UTF_8);

    String printed() {
        return bytes.toString(StandardCharsets.UTF_8);
    }

    /** Calls {@code show} whenever due, as the soak and chaos loops do, for {@code seconds} in 50 ms steps. */
    void run(Progress p, int seconds) {
        for (int i = 0; i < seconds * 20; i++) {
            now.addAndGet(50_000_000L);
            if (p.due()) {
                p.show(0.5, "soak: t=" + now.get() / 1_000_000_000L + " s");
            }
        }
    }

    @Test
    void pipesGetALineEvery30Seconds() {
        Progress p = new Progress(out, false, now::get);
        run(p, 29);
        assertEquals("", printed(), "nothing before the first interval");
        run(p, 61);
        assertEquals("soak: t=30 s\nsoak: t=60 s\nsoak: t=90 s\n", printed().replace(System.lineSeparator(), "\n"));
        p.done();
        assertFalse(printed().contains("\r") || printed().contains("\u001b"), "no terminal control in a pipe");
    }

    @Test
    void terminalsGetABarRedrawnInPlace() {
        Progress p = new Progress(out, true, now::get);
        run(p, 10);
        String s = printed();
        assertFalse(s.contains("\n"), "one line, redrawn");
        long redraws = s.chars().filter(c -> c == '\r').count();
        assertEquals(40, redraws, "four redraws a second");
        assertTrue(s.endsWith("\r[############            ]  50% soak: t=10 s" + Progress.ERASE_TO_END), s);
        p.done();
        assertTrue(printed().endsWith("\r" + Progress.ERASE_TO_END), "done clears the bar");
    }

    @Test
    void otherLinesArePrintedAboveTheBar() {
        Progress p = new Progress(out, true, now::get);
        p.show(0.25, "waiting");
        bytes.reset();
        try (PrintStream lines = p.linesAbove(out)) {
            lines.printf("[launch] worker %d started%n", 3);
        }
        String bar = "\r[######                  ]  25% waiting" + Progress.ERASE_TO_END;
        assertEquals("\r" + Progress.ERASE_TO_END + "[launch] worker 3 started" + System.lineSeparator() + bar, printed(),
                "bar cleared, line printed, bar drawn again");
        Progress pipe = new Progress(out, false, now::get);
        bytes.reset();
        pipe.above(out, "plain");
        assertEquals("plain" + System.lineSeparator(), printed(), "no bar, no control characters");
    }

    @Test
    void theBarIsClampedAndOptional() {
        assertEquals("", Progress.bar(Double.NaN), "no bar when the end is unknown");
        assertEquals("[" + " ".repeat(24) + "]   0% ", Progress.bar(-3));
        assertEquals("[" + "#".repeat(24) + "] 100% ", Progress.bar(7));
    }

    @Test
    void aTestRunIsNotAnInteractiveTerminal() {
        assertFalse(Progress.interactiveTerminal(1) || Progress.interactiveTerminal(2), "surefire's forked JVM writes to a pipe");
    }
}
