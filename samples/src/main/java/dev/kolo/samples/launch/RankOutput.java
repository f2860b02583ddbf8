package dev.kolo.samples.launch;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where workers' lines go: to the terminal prefixed with {@code [rank]} (all ranks, or only those chosen), and,
 * with a log directory, each rank's lines also to {@code DIR/rank.N.log}, written as they come.
 */
public final class RankOutput implements Launcher.OutputSink, AutoCloseable {
    private final PrintStream terminal;
    private final Set<Integer> shown;
    private final Path logDir;
    private final Map<Integer, BufferedWriter> logs = new HashMap<>();
    private final Set<Integer> failed = new java.util.HashSet<>();

    /**
     * @param shown the ranks whose lines reach the terminal; null for all
     * @param logDir the directory of the per-rank logs (created 0700 if missing; files 0600); null for none
     */
    public RankOutput(PrintStream terminal, Set<Integer> shown, Path logDir) {
        this.terminal = terminal;
        this.shown = shown == null ? null : Set.copyOf(shown);
        this.logDir = logDir;
        if (logDir != null) {
            try {
                PrivateLogFiles.createDirectory(logDir);
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create the log directory " + logDir + ": " + e.getMessage(), e);
            }
        }
    }

    /** @return the ranks of {@code all}, {@code none} or a comma-separated list of ranks and ranges ({@code 0,2-3}) */
    public static Set<Integer> parseRanks(String text) {
        if (text.equals("all")) {
            return null;
        }
        Set<Integer> ranks = new TreeSet<>();
        if (text.equals("none")) {
            return ranks;
        }
        for (String part : text.split(",", -1)) {
            String[] range = part.trim().split("-", -1);
            try {
                int from = Integer.parseInt(range[0]);
                int to = range.length == 2 ? Integer.parseInt(range[1]) : from;
                if (range.length > 2 || from < 0 || to < from || to - from > 65535) {
                    throw new NumberFormatException();
                }
                for (int r = from; r <= to; r++) {
                    ranks.add(r);
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--output-ranks must be all, none, or ranks and ranges such as "
                        + "0,2-3 (got '" + text + "')");
            }
        }
        return ranks;
    }

    /** What a worker logs once its job has formed, followed by the address of the coordinator's status page. */
    static final String STATUS_PAGE = "job status page ";
    /** The job page's address last printed: printed again only when the coordinator changes. */
    private String statusPage;

    @Override
    public void line(int rank, String line) {
        int at = line.indexOf(STATUS_PAGE);
        if (at >= 0) {
            String url = line.substring(at + STATUS_PAGE.length()).split(" ", 2)[0];
            synchronized (terminal) {
                if (!url.equals(statusPage)) {
                    statusPage = url;
                    terminal.println("[launch] the job has formed; watch it live at " + url);
                }
            }
        }
        if (shown == null || shown.contains(rank)) {
            synchronized (terminal) {
                terminal.println("[" + rank + "] " + line);
            }
        }
        if (logDir != null) {
            synchronized (logs) {
                if (failed.contains(rank)) {
                    return;
                }
                Path file = logDir.resolve("rank." + rank + ".log");
                try {
                    BufferedWriter w = logs.get(rank);
                    if (w == null) {
                        w = PrivateLogFiles.open(file);
                        logs.put(rank, w);
                    }
                    w.write(line);
                    w.newLine();
                    w.flush();
                } catch (IOException e) {
                    // The job goes on; its output still reaches the terminal.
                    failed.add(rank);
                    synchronized (terminal) {
                        terminal.println("[launch] cannot write " + file + " (" + e.getMessage() + "); rank " + rank
                                + "'s log stops here");
                    }
                }
            }
        }
    }

    @Override
    public void close() throws IOException {
        synchronized (logs) {
            for (BufferedWriter w : logs.values()) {
                w.close();
            }
            logs.clear();
        }
    }
}
