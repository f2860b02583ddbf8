package dev.kolo.samples.console;

import java.io.Console;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * Says how far long work is, so that a run of minutes is never silent. Where the output goes to a file or a
 * pipe, {@link #show} prints its text as a line once every {@link #LINE_INTERVAL_NANOS}; on an interactive
 * terminal it redraws one line in place, a bar and the text, every {@link #REDRAW_INTERVAL_NANOS}.
 * Callers ask {@link #due()} first, so that building the text costs nothing between reports. Other output
 * meant for the same terminal goes through {@link #above} or {@link #linesAbove}, which print it above the
 * bar. Thread-safe.
 */
public final class Progress {
    /** How often a line is printed where the output is not a terminal. */
    public static final long LINE_INTERVAL_NANOS = 30_000_000_000L;
    /** How often the bar is redrawn on a terminal. */
    public static final long REDRAW_INTERVAL_NANOS = 250_000_000L;
    /** Characters of the bar between its brackets. */
    static final int BAR_WIDTH = 24;
    /** ANSI: erase from the cursor to the end of the line. */
    static final String ERASE_TO_END = "\u001b[K";

    private final PrintStream out;
    private final boolean interactive;
    private final LongSupplier clock;
    private long next;
    private boolean drawn;
    private double lastFraction;
    private String lastText;

    Progress(PrintStream out, boolean interactive, LongSupplier clock) {
        this.out = out;
        this.interactive = interactive;
        this.clock = clock;
        this.next = clock.getAsLong() + (interactive ? REDRAW_INTERVAL_NANOS : LINE_INTERVAL_NANOS);
    }

    /**
     * @param out {@code System.out} or {@code System.err}
     * @return progress reported on {@code out}, as a bar if it is an interactive terminal
     */
    public static Progress on(PrintStream out) {
        return new Progress(out, interactiveTerminal(out == System.err ? 2 : 1), System::nanoTime);
    }

    /** @return true when reports are a bar redrawn in place */
    public boolean interactive() {
        return interactive;
    }

    /** @return true when a report is due: call {@link #show} now */
    public synchronized boolean due() {
        return clock.getAsLong() >= next;
    }

    /**
     * Reports; the next report is due one interval later.
     *
     * @param fraction how much is done, from 0 to 1, or NaN when unknown (no bar then, only the text)
     * @param text what is being done or awaited, and how long so far
     */
    public synchronized void show(double fraction, String text) {
        long now = clock.getAsLong();
        if (interactive) {
            next = now + REDRAW_INTERVAL_NANOS;
            lastFraction = fraction;
            lastText = text;
            draw();
        } else {
            next = now + LINE_INTERVAL_NANOS;
            out.println(text);
        }
    }

    /** Clears the bar, so that what is printed next starts on a clean line. */
    public synchronized void done() {
        if (drawn) {
            out.print("\r" + ERASE_TO_END);
            out.flush();
            drawn = false;
        }
    }

    /** Prints {@code line} on {@code target} above the bar: the bar is cleared first and drawn again after. */
    public synchronized void above(PrintStream target, String line) {
        boolean redraw = drawn;
        done();
        target.println(line);
        target.flush();
        if (redraw) {
            draw();
        }
    }

    /** @return a stream whose complete lines are printed on {@code target} above the bar */
    public PrintStream linesAbove(PrintStream target) {
        return new PrintStream(new LineSplitter(line -> above(target, line)), true, StandardCharsets.UTF_8);
    }

    private void draw() {
        out.print("\r" + bar(lastFraction) + lastText + ERASE_TO_END);
        out.flush();
        drawn = true;
    }

    static String bar(double fraction) {
        if (Double.isNaN(fraction)) {
            return "";
        }
        double f = Math.max(0, Math.min(1, fraction));
        int full = (int) Math.round(f * BAR_WIDTH);
        return "[" + "#".repeat(full) + " ".repeat(BAR_WIDTH - full) + "] "
                + String.format(Locale.ROOT, "%3d%% ", Math.round(f * 100));
    }

    /**
     * True when the process runs on a terminal that understands carriage returns and ANSI erase, and file
     * descriptor {@code fd} is that terminal. From Java 22, {@link System#console()} is not null for
     * redirected output too, and {@code Console.isTerminal()} tells; before, a console exists only when input
     * and output are a terminal. Standard error is checked through /proc where there is one ({@code 2>file}
     * leaves the console in place).
     */
    static boolean interactiveTerminal(int fd) {
        Console console = System.console();
        if (console == null || "dumb".equals(System.getenv("TERM"))) {
            return false;
        }
        try {
            Method isTerminal = Console.class.getMethod("isTerminal");
            if (!(Boolean) isTerminal.invoke(console)) {
                return false;
            }
        } catch (NoSuchMethodException e) {
            // Java 17 to 21: the console exists, so input and output are a terminal.
        } catch (ReflectiveOperationException e) {
            return false;
        }
        Path link = Path.of("/proc/self/fd/" + fd);
        try {
            String target = Files.readSymbolicLink(link).toString();
            return target.startsWith("/dev/pts/") || target.startsWith("/dev/tty");
        } catch (IOException | UnsupportedOperationException e) {
            return !Files.isDirectory(Path.of("/proc/self/fd"));
        }
    }
}
