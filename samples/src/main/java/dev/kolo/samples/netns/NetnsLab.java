package dev.kolo.samples.netns;

import dev.kolo.runtime.Settings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * "Nodes" for multi-host runs on one machine (PodRestartIT, the network scenarios of {@code bench chaos},
 * {@code bench allreduce --hosts}). As root: one network namespace per node, each with a veth pair whose other end
 * is in a bridge of this run (no address in the root namespace, so nothing leaks into the machine's routing),
 * addresses 10.77.X.(i+1)/24 with X random per run, every node's cluster on the default cluster port. Not root (or
 * with {@code -Dkolo.it.loopback=true}): every node is a loopback process on its own port, and {@link #describe()}
 * says so ({@link #createIsolated} refuses).
 *
 * <p>Names carry the JVM's pid and a random run id ({@code kolo-ns-<pid>-<run>-<i>}, bridges {@code kb<run>} and,
 * for a partition, {@code kp<run>}, links {@code kh<run><i>}); {@link #close()} removes everything, also from a
 * shutdown hook (Ctrl-C), and a new lab first removes what a killed JVM left behind.
 */
public final class NetnsLab implements AutoCloseable {
    private static final String PREFIX = "kolo-ns-";
    /** Namespaces of labs from before the class moved to main code, swept too. */
    private static final String OLD_PREFIX = "kolo-it-";
    private final boolean isolated;
    private final int nodes;
    private final String run;
    private final int subnet;
    private final int basePort;
    private final Thread cleanup;
    private boolean partitioned;
    private boolean closed;

    private NetnsLab(int nodes, boolean isolated) throws IOException, InterruptedException {
        this.nodes = nodes;
        Random random = new Random();
        this.run = String.format(Locale.ROOT, "%06x", random.nextInt(1 << 24));
        this.subnet = 1 + random.nextInt(254);
        this.basePort = 17000 + 20 * random.nextInt(150);
        this.isolated = isolated;
        this.cleanup = new Thread(this::removeAll, "netns-lab-cleanup");
        if (isolated) {
            sweepStale();
            Runtime.getRuntime().addShutdownHook(cleanup);
            try {
                sh("ip", "link", "add", bridge(), "type", "bridge");
                sh("ip", "link", "set", bridge(), "up");
                for (int i = 0; i < nodes; i++) {
                    addNode(i);
                }
            } catch (IOException | RuntimeException e) {
                close();
                throw e;
            }
        }
    }

    /** @return a lab of {@code nodes} nodes: namespaces as root, loopback processes otherwise */
    public static NetnsLab create(int nodes) throws IOException, InterruptedException {
        // -Dkolo.it.loopback=true tries the fallback as root.
        return new NetnsLab(nodes, unavailable() == null && !Boolean.getBoolean("kolo.it.loopback"));
    }

    /** @return a lab of {@code nodes} network namespaces; fails with {@link #unavailable()}'s reason if it cannot */
    public static NetnsLab createIsolated(int nodes) throws IOException, InterruptedException {
        String why = unavailable();
        if (why != null) {
            throw new IOException(why);
        }
        return new NetnsLab(nodes, true);
    }

    /** @return null when namespaces can be made here (root, {@code ip} present), else why not */
    public static String unavailable() {
        if (!isRoot()) {
            return "network namespaces need root (run as root, e.g. sudo; this user is not)";
        }
        if (!onPath("ip")) {
            return "the 'ip' command (Debian package iproute2) is missing";
        }
        return null;
    }

    /** @return true when {@code command} is an executable in a directory of PATH */
    public static boolean onPath(String command) {
        String path = System.getenv("PATH");
        for (String dir : (path == null ? "/usr/sbin:/usr/bin:/sbin:/bin" : path + ":/usr/sbin:/sbin").split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, command))) {
                return true;
            }
        }
        return false;
    }

    /** @return true when the nodes are network namespaces (root), false for loopback processes */
    public boolean isolated() {
        return isolated;
    }

    public String describe() {
        return isolated ? "network namespaces " + namespace(0) + ".." + (nodes - 1) + " on bridge " + bridge()
                + ", addresses 10.77." + subnet + ".1.." + nodes
                : "NOT isolated (not root, or -Dkolo.it.loopback=true): the nodes are loopback processes on ports "
                        + basePort + ".." + (basePort + nodes - 1);
    }

    /** @return the node's address (10.77.X.node+1 in a namespace, 127.0.0.1 otherwise) */
    public String address(int node) {
        return isolated ? "10.77." + subnet + "." + (node + 1) : "127.0.0.1";
    }

    public int clusterPort(int node) {
        return isolated ? Settings.CLUSTER_PORT.defaultValue() : basePort + node;
    }

    /** @return every node's {@code host:port}, for {@code --members} */
    public String members() {
        List<String> m = new ArrayList<>();
        for (int i = 0; i < nodes; i++) {
            m.add(address(i) + ":" + clusterPort(i));
        }
        return String.join(",", m);
    }

    /** @return the command prefix that runs a program on {@code node} */
    public List<String> exec(int node) {
        return isolated ? List.of("ip", "netns", "exec", namespace(node)) : List.of();
    }

    /** Runs a command on {@code node} (in its namespace); returns its output. */
    public String shOn(int node, String... cmd) throws IOException, InterruptedException {
        List<String> all = new ArrayList<>(exec(node));
        all.addAll(List.of(cmd));
        return sh(all.toArray(new String[0]));
    }

    /** The node's network fails: its link goes down, nothing it sends arrives any more. */
    public void cut(int node) throws IOException, InterruptedException {
        if (isolated) {
            sh("ip", "link", "set", hostLink(node), "down");
        }
    }

    /** Ends a {@link #cut}: the node's link is up again. */
    public void restore(int node) throws IOException, InterruptedException {
        if (isolated) {
            sh("ip", "link", "set", hostLink(node), "up");
        }
    }

    /**
     * Splits the network in two: the {@code minority} nodes' links move to a second bridge, so they still reach
     * each other but no longer the rest (frames across are silently lost, as behind a failed switch).
     */
    public void partition(int... minority) throws IOException, InterruptedException {
        requireIsolated("partition");
        if (!partitioned) {
            sh("ip", "link", "add", partitionBridge(), "type", "bridge");
            sh("ip", "link", "set", partitionBridge(), "up");
            partitioned = true;
        }
        for (int node : minority) {
            sh("ip", "link", "set", hostLink(node), "master", partitionBridge());
        }
    }

    /** Ends a {@link #partition}: every node's link is back on the one bridge. */
    public void heal() throws IOException, InterruptedException {
        requireIsolated("heal");
        for (int i = 0; i < nodes; i++) {
            sh("ip", "link", "set", hostLink(i), "master", bridge());
        }
    }

    /**
     * Limits what the node sends to {@code rate} (tc's token bucket on its link, e.g. {@code 10gbit}): a host's
     * network card, where loopback would otherwise move bytes as fast as memory.
     */
    public void limitRate(int node, String rate) throws IOException, InterruptedException {
        requireIsolated("limitRate");
        shOn(node, "tc", "qdisc", "add", "dev", "eth0", "root", "tbf", "rate", rate, "burst", "4mb", "latency",
                "100ms");
    }

    /** The node is gone (its process must have exited): its namespace and links are deleted. */
    public void remove(int node) throws IOException, InterruptedException {
        if (isolated) {
            // The link first: a deleted namespace releases its devices asynchronously, too late for a quick replace.
            sh("ip", "link", "del", hostLink(node));
            sh("ip", "netns", "del", namespace(node));
        }
    }

    /** A replacement node with the same address (a pod restarted under the same name). */
    public void replace(int node) throws IOException, InterruptedException {
        if (isolated) {
            addNode(node);
        }
    }

    private void requireIsolated(String what) throws IOException {
        if (!isolated) {
            throw new IOException(what + " needs network namespaces: " + describe());
        }
    }

    private void addNode(int i) throws IOException, InterruptedException {
        String ns = namespace(i);
        sh("ip", "netns", "add", ns);
        sh("ip", "link", "add", hostLink(i), "type", "veth", "peer", "name", "eth0", "netns", ns);
        sh("ip", "link", "set", hostLink(i), "master", bridge(), "up");
        sh("ip", "-n", ns, "addr", "add", address(i) + "/24", "dev", "eth0");
        sh("ip", "-n", ns, "link", "set", "eth0", "up");
        sh("ip", "-n", ns, "link", "set", "lo", "up");
    }

    private String namespace(int i) {
        return PREFIX + ProcessHandle.current().pid() + "-" + run + "-" + i;
    }

    private String bridge() {
        return "kb" + run;
    }

    private String partitionBridge() {
        return "kp" + run;
    }

    private String hostLink(int i) {
        return "kh" + run + i;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        removeAll();
        try {
            Runtime.getRuntime().removeShutdownHook(cleanup);
        } catch (IllegalStateException | IllegalArgumentException ignored) {
            // shutting down, or never added
        }
    }

    /** @return the processes that run in the node's namespace (none when the nodes are loopback processes) */
    public List<ProcessHandle> processes(int node) throws IOException, InterruptedException {
        List<ProcessHandle> out = new ArrayList<>();
        if (isolated) {
            for (String pid : sh("ip", "netns", "pids", namespace(node)).split("\\s+")) {
                if (!pid.isEmpty()) {
                    ProcessHandle.of(Long.parseLong(pid)).ifPresent(out::add);
                }
            }
        }
        return out;
    }

    private void removeAll() {
        if (!isolated) {
            return;
        }
        for (int i = 0; i < nodes; i++) {
            // A namespace is deleted only in name while a process still runs in it: nothing may outlive the lab.
            try {
                processes(i).forEach(ProcessHandle::destroyForcibly);
            } catch (Exception gone) {
                // the namespace is gone already
            }
        }
        for (int i = 0; i < nodes; i++) {
            quietly("ip", "netns", "del", namespace(i)); // also deletes the veth pair (and tc, iptables state)
            quietly("ip", "link", "del", hostLink(i));
        }
        quietly("ip", "link", "del", bridge());
        quietly("ip", "link", "del", partitionBridge());
    }

    /** Removes namespaces (and bridges) of labs whose JVM died without cleaning up. */
    private static void sweepStale() {
        String list;
        try {
            list = sh("ip", "netns", "list");
        } catch (Exception e) {
            return;
        }
        for (String line : list.split("\n")) {
            String name = line.trim().split("\\s+")[0];
            String prefix = name.startsWith(PREFIX) ? PREFIX : name.startsWith(OLD_PREFIX) ? OLD_PREFIX : null;
            if (prefix == null) {
                continue;
            }
            String[] parts = name.substring(prefix.length()).split("-");
            if (parts.length != 3) {
                continue;
            }
            long pid;
            try {
                pid = Long.parseLong(parts[0]);
            } catch (NumberFormatException e) {
                continue;
            }
            if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                continue;
            }
            quietly("ip", "netns", "del", name);
            quietly("ip", "link", "del", "kh" + parts[1] + parts[2]);
            quietly("ip", "link", "del", "kb" + parts[1]);
            quietly("ip", "link", "del", "kp" + parts[1]);
        }
    }

    private static boolean isRoot() {
        try {
            return "0".equals(sh("id", "-u").trim());
        } catch (Exception e) {
            return false;
        }
    }

    private static void quietly(String... cmd) {
        try {
            sh(cmd);
        } catch (Exception ignored) {
            // already gone
        }
    }

    /** Runs a command (10 s at most); returns its output, fails with it on a non-zero exit. */
    static String sh(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        if (!p.waitFor(10, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", cmd) + ": no exit within 10 s");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed (" + p.exitValue() + "): " + out.trim());
        }
        return out;
    }
}
