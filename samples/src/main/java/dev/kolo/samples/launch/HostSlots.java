package dev.kolo.samples.launch;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The hosts of a launch and how many workers each takes, from {@code -H host:slots,...} or a hostfile (one host
 * per line, {@code host slots=N} or {@code host:N}; {@code #} starts a comment). Ranks fill the hosts in order:
 * the first host's slots take ranks 0 to slots-1, and so on.
 */
public final class HostSlots {
    /** A host and the number of workers it runs. */
    public record Host(String name, int slots) {
    }

    /** Where one rank runs: its host (null: this machine, without SSH) and its index among that host's workers. */
    public record Placement(int rank, String host, int localIndex) {
    }

    private static final Pattern COLON = Pattern.compile("([^\\s:,]+|\\[[0-9A-Fa-f:.]+\\])(?::(\\d+))?");
    private static final Pattern HOSTFILE_LINE = Pattern.compile("([^\\s:]+)(?:\\s+slots\\s*=\\s*(\\d+)|:(\\d+))?");
    private static final int MAX_SLOTS = 4096;

    private HostSlots() {
    }

    /** @return the hosts of {@code -H h1:2,h2:2} (a host without {@code :N} has one slot) */
    public static List<Host> parse(String list) {
        List<Host> hosts = new ArrayList<>();
        for (String item : list.split(",", -1)) {
            Matcher m = COLON.matcher(item.trim());
            if (!m.matches()) {
                throw new IllegalArgumentException("-H must be a comma-separated list of host or host:slots (got '"
                        + item + "' in '" + list + "')");
            }
            hosts.add(host(m.group(1), m.group(2), "-H " + list));
        }
        return checked(hosts, "-H " + list);
    }

    /** @return the hosts of a hostfile */
    public static List<Host> read(Path file) {
        List<String> lines;
        try {
            lines = Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the hostfile " + file + ": " + e.getMessage(), e);
        }
        List<Host> hosts = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i).replaceFirst("#.*", "").trim();
            if (line.isEmpty()) {
                continue;
            }
            Matcher m = HOSTFILE_LINE.matcher(line);
            String where = file + " line " + (i + 1);
            if (!m.matches()) {
                throw new IllegalArgumentException(where + ": expected 'host', 'host slots=N' or 'host:N' (got '"
                        + line + "')");
            }
            hosts.add(host(m.group(1), m.group(2) != null ? m.group(2) : m.group(3), where));
        }
        return checked(hosts, "the hostfile " + file);
    }

    /**
     * @return where ranks 0 to np-1 run, filling the hosts in order; on loopback-only hosts (or none) every
     *     placement's host is null (started here, without SSH)
     */
    public static List<Placement> place(List<Host> hosts, int np) {
        List<Placement> out = new ArrayList<>();
        if (hosts.isEmpty() || hosts.stream().allMatch(h -> isLoopback(h.name()))) {
            for (int r = 0; r < np; r++) {
                out.add(new Placement(r, null, r));
            }
            return out;
        }
        for (Host h : hosts) {
            if (isLoopback(h.name())) {
                throw new IllegalArgumentException("-H mixes " + h.name() + " with other hosts, which cannot reach it "
                        + "by that name: name this machine by an address the other hosts reach");
            }
        }
        int total = hosts.stream().mapToInt(Host::slots).sum();
        if (total < np) {
            throw new IllegalArgumentException("-np " + np + " needs " + np + " slots, the hosts give " + total
                    + ": add hosts or slots (host:N), or lower -np");
        }
        int rank = 0;
        for (Host h : hosts) {
            for (int i = 0; i < h.slots() && rank < np; i++) {
                out.add(new Placement(rank++, h.name(), i));
            }
        }
        return out;
    }

    static boolean isLoopback(String host) {
        String h = host.toLowerCase(Locale.ROOT);
        return h.equals("localhost") || h.startsWith("127.") || h.equals("::1") || h.equals("[::1]");
    }

    private static Host host(String name, String slots, String where) {
        if (name.startsWith("-")) {
            // ssh would take it for an option (e.g. -oProxyCommand=...), not a host.
            throw new IllegalArgumentException(where + ": host '" + name + "' begins with '-', which ssh would take "
                    + "as an option: name the host by its name or address (options for ssh go in --ssh-option)");
        }
        int n = 1;
        if (slots != null) {
            try {
                n = Integer.parseInt(slots);
            } catch (NumberFormatException e) {
                n = -1;
            }
            if (n < 1 || n > MAX_SLOTS) {
                throw new IllegalArgumentException(where + ": slots of " + name + " must be 1 to " + MAX_SLOTS
                        + " (got " + slots + ")");
            }
        }
        return new Host(name.startsWith("[") ? name.substring(1, name.length() - 1) : name, n);
    }

    private static List<Host> checked(List<Host> hosts, String where) {
        if (hosts.isEmpty()) {
            throw new IllegalArgumentException(where + " names no host");
        }
        for (int i = 0; i < hosts.size(); i++) {
            for (int j = 0; j < i; j++) {
                if (hosts.get(i).name().equals(hosts.get(j).name())) {
                    throw new IllegalArgumentException(where + " names " + hosts.get(i).name()
                            + " twice: give it all its slots once (host:N)");
                }
            }
        }
        return List.copyOf(hosts);
    }
}
