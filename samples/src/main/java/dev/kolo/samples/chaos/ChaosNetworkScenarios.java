package dev.kolo.samples.chaos;

import dev.kolo.samples.chaos.ChaosJob.Worker;
import dev.kolo.samples.netns.NetnsLab;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;

/**
 * The network scenarios of {@code bench chaos}: workers in network namespaces ({@link NetnsLab}, root only),
 * finding each other through {@code --discovery members} with a job secret, as on separate hosts.
 * <ul>
 * <li>{@code partition-3-2}: five workers, the network splits {0,1,2} | {3,4}; the majority must go on alone,
 * the minority must pause and commit nothing, the checkpoint directory must hold one lineage; after the heal
 * all five must train together again with equal parameters.</li>
 * <li>{@code slow-lossy-link}: two workers over a delayed, lossy link must see no failure and end bit-identical
 * to the same job over a clean link.</li>
 * </ul>
 */
final class ChaosNetworkScenarios {
    /** How long a worker that cannot regroup waits before it gives up with exit 3 (the default is 600 s). */
    static final int ELASTIC_TIMEOUT_S = 30;
    /** Steps of each slow-lossy-link run. */
    static final int LINK_STEPS = 100;
    /** The shaping; {@link #shape} falls back when the kernel has no netem. */
    static final List<String> NETEM = List.of("netem", "delay", "20ms", "5ms", "loss", "1%");

    private ChaosNetworkScenarios() {
    }

    /** One {@code kolo: step=} line. */
    record Step(long step, int size, long gen, String checksum) {
        static Step parse(String line) {
            Matcher m = ChaosLog.STEP.matcher(line);
            return m.find() ? new Step(Long.parseLong(m.group(1)), Integer.parseInt(m.group(3)),
                    Long.parseLong(m.group(4)), m.group(5)) : null;
        }
    }

    // ------------------------------------------------------------------ partition-3-2

    /**
     * Elastic np 5 (min-np 3) in five namespaces. After some commits the network splits {0,1,2} | {3,4}. Checks:
     * the majority resets and trains on as size 3; the minority prints no step of another size and no reset
     * (it commits nothing: it cannot form a generation); every checkpoint written meanwhile comes from the
     * majority's generations and the directory's steps rise with the generation (one lineage); after the heal
     * each minority worker either rejoins in place or exits 3 after KOLO_ELASTIC_TIMEOUT, then is restarted;
     * all five end at a common commit with equal checksums (they are then SIGTERMed and must leave with exit 0).
     */
    static String partition32(ChaosScenarios s, long deadline) throws Exception {
        requireNamespaces();
        Path dir = Files.createTempDirectory("kolo-chaos-partition");
        ChaosCheckpoints checkpoints = new ChaosCheckpoints(dir);
        try (NetnsLab lab = NetnsLab.createIsolated(5);
             ChaosJob job = new ChaosJob(5, 3, 5, s.args(1_000_000, "--checkpoint-dir", dir.toString(),
                     "--checkpoint-every", "5", "--heartbeat-timeout", "3"), deadline)) {
            job.env("KOLO_JOB_SECRET", "chaos-" + UUID.randomUUID());
            job.env("KOLO_ELASTIC_TIMEOUT", Integer.toString(ELASTIC_TIMEOUT_S));
            Worker[] w = new Worker[5];
            // Node 0 first: it is the oldest member (the coordinator) and rank 0 (the checkpoint writer).
            w[0] = startOn(lab, job, 0);
            w[0].await(job, "w0 to form the cluster", l -> l.contains("coordinating job"));
            for (int i = 1; i < 5; i++) {
                w[i] = startOn(lab, job, i);
            }
            job.await("5 workers training", () -> job.stepping(5, 5, 15));
            List<Worker> majority = List.of(w[0], w[1], w[2]);
            List<Worker> minority = List.of(w[3], w[4]);
            long genBefore = maxGen(job.workers());
            int[] mark = {w[3].lines().size(), w[4].lines().size()};
            long cut = System.nanoTime();
            Map<Worker, Long> exitedAt = new java.util.concurrent.ConcurrentHashMap<>();
            for (Worker x : minority) {
                x.process.onExit().thenRun(() -> exitedAt.put(x, System.nanoTime()));
            }
            lab.partition(3, 4);

            job.await("the majority {w0,w1,w2} to regroup as 3", () -> anyExited(majority) || majority.stream()
                    .allMatch(x -> x.printed(l -> l.startsWith("kolo: reset ") && l.contains(" size=3 "))));
            failIfExited(majority);
            double regrouped = seconds(cut);
            long resumedAt = majority.stream().mapToLong(x -> resetStep(x, 3)).max().orElseThrow();
            job.await("the majority to make 30 steps as size 3", () -> anyExited(majority) || majority.stream()
                    .allMatch(x -> lastStep(x, 3) >= resumedAt + 30));
            failIfExited(majority);
            long splitSteps = majority.stream().mapToLong(x -> lastStep(x, 3)).min().orElseThrow() - resumedAt;
            Set<Long> majorityGens = gensAfter(majority, genBefore);
            String paused = checkMinorityPaused(minority, mark, genBefore);
            double partitionSeconds = seconds(cut);

            int[] healMark = {w[3].lines().size(), w[4].lines().size()};
            lab.heal();
            long healed = System.nanoTime();
            // Rejoin in place (Hazelcast merges the two clusters) or exit 3 once KOLO_ELASTIC_TIMEOUT has passed.
            long settle = healed + TimeUnit.SECONDS.toNanos(ELASTIC_TIMEOUT_S + 45);
            job.await("each minority worker to rejoin or to exit", () -> System.nanoTime() > settle
                    || minority.stream().allMatch(x -> !x.process.isAlive() || rejoined(x, mark(x, w, healMark))));
            List<String> fates = new ArrayList<>();
            List<Worker> current = new ArrayList<>(majority);
            for (int i = 0; i < minority.size(); i++) {
                Worker x = minority.get(i);
                int node = 3 + i;
                if (x.process.isAlive()) {
                    if (!rejoined(x, healMark[i])) {
                        throw new ChaosFailure(x.name + " (minority) neither rejoined nor exited within "
                                + (ELASTIC_TIMEOUT_S + 45) + " s of the heal (hang?): " + x.tail());
                    }
                    fates.add(x.name + merged(x, healMark[i]) + " rejoined in place (" + rejoinLine(x, healMark[i])
                            + ")");
                    current.add(x);
                    continue;
                }
                int code = x.process.exitValue();
                if (code != 3) {
                    throw new ChaosFailure(x.name + " (minority) exited " + code + ", not 3 with a message: "
                            + x.tail());
                }
                double after = (exitedAt.getOrDefault(x, System.nanoTime()) - cut) / 1e9;
                fates.add(x.name + merged(x, healMark[i]) + " exited 3 " + String.format(Locale.ROOT, "%.0f", after)
                        + " s after the cut (\"" + ChaosScenarios.lastKoloLine(x.err) + "\"), restarted");
                current.add(startOn(lab, job, node));
            }
            // All five together again: a commit of size 5 after the split that every current worker printed.
            job.await("all 5 workers at a common commit of size 5 after the heal", () -> anyExited(current)
                    || commonPoints(current, genBefore).size() >= 2);
            failIfExited(current);
            List<Step> common = commonPoints(current, genBefore);
            Step last = common.get(common.size() - 1);
            double together = seconds(healed);
            for (Worker x : current) {
                x.signal("TERM");
            }
            job.awaitAllExited();
            for (Worker x : current) {
                if (x.process.exitValue() != 0) {
                    throw new ChaosFailure(x.name + " exited " + x.process.exitValue() + " after SIGTERM: "
                            + x.tail());
                }
            }
            ChaosLog log = job.log();
            int compared = log.checkConsistent();
            String lineage = checkpoints.checkOneLineage(genBefore, majorityGens);
            ChaosScenarios.verify(dir);
            return String.format(Locale.ROOT, "split at gen %d; majority reset in %.1f s, made %d steps as size 3 "
                    + "(gens %s) in %.0f s of partition; minority %s; after the heal: %s; all 5 at step %d gen %d "
                    + "%.0f s after the heal, checksum %s; %s; %d points compared", genBefore, regrouped,
                    splitSteps, majorityGens, partitionSeconds, paused, String.join(", ", fates), last.step(),
                    last.gen(), together, last.checksum(), lineage, compared);
        } finally {
            checkpoints.close();
            ChaosScenarios.deleteTree(dir);
        }
    }

    /** A minority worker rejoined in place: it printed a reset line (a new generation took it in) after the heal. */
    private static boolean rejoined(Worker x, int from) {
        return !rejoinLine(x, from).isEmpty();
    }

    private static String rejoinLine(Worker x, int from) {
        List<String> all = x.lines();
        for (int i = Math.min(from, all.size()); i < all.size(); i++) {
            if (all.get(i).startsWith("kolo: reset ")) {
                return all.get(i);
            }
        }
        return "";
    }

    /** Whether the worker's log (Hazelcast's lines included) mentions a split-brain merge after the heal. */
    private static String merged(Worker x, int from) {
        List<String> all = x.lines();
        for (int i = Math.min(from, all.size()); i < all.size(); i++) {
            String l = all.get(i).toLowerCase(Locale.ROOT);
            if (l.contains("merg")) {
                return " (Hazelcast merge logged: \"" + abbreviate(all.get(i), 120) + "\")";
            }
        }
        return " (no merge logged)";
    }

    private static String abbreviate(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max) + "...";
    }

    private static int mark(Worker x, Worker[] w, int[] mark) {
        return x == w[3] ? mark[0] : mark[1];
    }

    /**
     * The minority during the split: no reset (it formed no generation), no step line of another size or a
     * newer generation. A step line of the old generation may be printed as the cut falls (a commit whose
     * last bytes were already on the way); such a commit must not be ahead of where the majority went on.
     */
    private static String checkMinorityPaused(List<Worker> minority, int[] mark, long genBefore) throws ChaosFailure {
        int late = 0;
        for (int i = 0; i < minority.size(); i++) {
            Worker x = minority.get(i);
            List<String> all = x.lines();
            List<String> after = all.subList(Math.min(mark[i], all.size()), all.size());
            for (String l : after) {
                if (l.startsWith("kolo: reset ")) {
                    throw new ChaosFailure(x.name + " (minority) regrouped during the partition: " + l);
                }
                Step st = Step.parse(l);
                if (st != null) {
                    if (st.size() != 5 || st.gen() != genBefore) {
                        throw new ChaosFailure(x.name + " (minority) committed during the partition: " + l);
                    }
                    late++;
                }
            }
        }
        String alive = minority.stream().map(x -> x.name + (x.process.isAlive() ? " waiting" : " exited "
                + x.process.exitValue())).reduce((a, b) -> a + ", " + b).orElse("");
        return "paused (no reset, no commit of its own" + (late > 0 ? "; " + late + " commit line(s) of the old "
                + "generation as the cut fell" : "") + "; " + alive + " at the heal)";
    }

    /** Worker's own step lines at the points every one of {@code workers} printed, size 5, after {@code gen}. */
    private static List<Step> commonPoints(List<Worker> workers, long gen) {
        Map<String, Step> first = null;
        for (Worker x : workers) {
            Map<String, Step> mine = new TreeMap<>();
            for (String l : x.lines()) {
                Step st = Step.parse(l);
                if (st != null && st.size() == 5 && st.gen() > gen) {
                    mine.put(String.format(Locale.ROOT, "%012d-%06d", st.step(), st.gen()), st);
                }
            }
            if (first == null) {
                first = mine;
            } else {
                first.keySet().retainAll(mine.keySet());
            }
        }
        return first == null ? List.of() : new ArrayList<>(first.values());
    }

    private static boolean anyExited(List<Worker> workers) {
        return workers.stream().anyMatch(x -> !x.process.isAlive());
    }

    private static void failIfExited(List<Worker> workers) throws ChaosFailure {
        for (Worker x : workers) {
            if (!x.process.isAlive()) {
                throw new ChaosFailure(x.name + " exited " + x.process.exitValue() + " while it had to train on: "
                        + x.tail());
            }
        }
    }

    private static long maxGen(List<Worker> workers) {
        long max = 0;
        for (Worker x : workers) {
            for (String l : x.lines()) {
                Step st = Step.parse(l);
                if (st != null) {
                    max = Math.max(max, st.gen());
                }
            }
        }
        return max;
    }

    private static Set<Long> gensAfter(List<Worker> workers, long gen) {
        Set<Long> out = new TreeSet<>();
        for (Worker x : workers) {
            for (String l : x.lines()) {
                Step st = Step.parse(l);
                if (st != null && st.gen() > gen) {
                    out.add(st.gen());
                }
            }
        }
        return out;
    }

    /** Step of the worker's first reset line to {@code size}, or -1. */
    private static long resetStep(Worker x, int size) {
        for (String l : x.lines()) {
            Matcher m = ChaosLog.RESET.matcher(l);
            if (m.find() && Integer.parseInt(m.group(2)) == size) {
                return Long.parseLong(m.group(6));
            }
        }
        return -1;
    }

    /** Highest step the worker printed at {@code size}, or -1. */
    private static long lastStep(Worker x, int size) {
        long max = -1;
        for (String l : x.lines()) {
            Step st = Step.parse(l);
            if (st != null && st.size() == size) {
                max = Math.max(max, st.step());
            }
        }
        return max;
    }

    // ------------------------------------------------------------------ slow-lossy-link

    /**
     * The same fixed np-2 job twice in two namespaces, first over a clean link, then with each node's eth0
     * shaped ({@link #NETEM}, or the fallback of {@link #shape}). Pass: no reset, no lost worker, exit 0, and the
     * shaped run's checksums equal the clean run's at every commit and at the end.
     *
     * <p>np 2 on purpose: each element of an allreduce is then the sum of exactly two values, and a + b == b + a
     * in IEEE arithmetic, so the result cannot depend on how tensors were fused. With three or more ranks the
     * ring's summation order of an element depends on where it falls in the (fused) buffer, and fusion depends
     * on timing (KOLO_CYCLE_TIME batching), so a slower link could change the last bits legitimately.
     */
    static String slowLossyLink(ChaosScenarios s, long deadline) throws Exception {
        requireNamespaces();
        if (!NetnsLab.onPath("tc")) {
            throw new ChaosSkipped("the 'tc' command (Debian package iproute2) is missing");
        }
        try (NetnsLab lab = NetnsLab.createIsolated(2)) {
            String secret = "chaos-" + UUID.randomUUID();
            LinkRun clean = linkRun(s, lab, secret, deadline);
            String shaping = shape(lab);
            long retransBefore = retransmits(lab);
            LinkRun shaped = linkRun(s, lab, secret, deadline);
            long retrans = retransmits(lab) - retransBefore;
            if (!shaped.checksums().equals(clean.checksums())) {
                throw new ChaosFailure("the shaped run's checksums differ from the clean run's: clean "
                        + clean.checksums() + ", shaped " + shaped.checksums());
            }
            if (!shaped.done().equals(clean.done())) {
                throw new ChaosFailure("done checksum " + shaped.done() + " over the shaped link, " + clean.done()
                        + " over the clean one");
            }
            return String.format(Locale.ROOT, "%s; np 2, %d steps: clean %.1f s, shaped %.1f s, %d TCP segments "
                    + "retransmitted; no reset, no worker lost; checksum %s bit-identical to the clean run at all %d "
                    + "commits", shaping, LINK_STEPS, clean.seconds(), shaped.seconds(), retrans, shaped.done(),
                    shaped.checksums().size());
        }
    }

    /** One run of the link scenario: its duration, rank 0's checksum per step, the done checksum. */
    record LinkRun(double seconds, Map<Long, String> checksums, String done) {
    }

    private static LinkRun linkRun(ChaosScenarios s, NetnsLab lab, String secret, long deadline) throws Exception {
        long t0 = System.nanoTime();
        try (ChaosJob job = new ChaosJob(2, 0, 0, s.args(LINK_STEPS, "--heartbeat-timeout", "3"), deadline)) {
            job.env("KOLO_JOB_SECRET", secret);
            Worker a = startOn(lab, job, 0);
            startOn(lab, job, 1);
            job.awaitAllExited();
            ChaosScenarios.checkExits(job, List.of());
            ChaosLog log = job.log();
            if (!log.resets().isEmpty()) {
                throw new ChaosFailure("a failure was detected on the link: " + log.resets());
            }
            for (Worker x : job.workers()) {
                List<String> lost;
                synchronized (x.err) {
                    lost = x.err.stream().filter(l -> l.contains("was lost") || l.contains("WorkerLost")).toList();
                }
                if (!lost.isEmpty() || x.printed(l -> l.contains("WorkerLost"))) {
                    throw new ChaosFailure(x.name + " reported a lost worker: " + lost);
                }
            }
            log.checkConsistent();
            String done = log.checkDone(2);
            Map<Long, String> sums = new TreeMap<>();
            for (String l : a.lines()) {
                Step st = Step.parse(l);
                if (st != null) {
                    sums.put(st.step(), st.checksum());
                }
            }
            return new LinkRun(seconds(t0), sums, done);
        }
    }

    /**
     * Shapes each node's eth0: the netem (delay 20 ms +- 5 ms, loss 1%). Kernels without netem (this
     * build machine's) get what they have: a token bucket (20 Mbit/s, at most 20 ms of queue, tail drop) and, if
     * {@code iptables} is installed, a random drop of 1% of the packets each node sends.
     *
     * @return what was applied
     */
    static String shape(NetnsLab lab) throws IOException, InterruptedException {
        String applied = null;
        for (int node = 0; node < 2; node++) {
            List<String> netem = new ArrayList<>(List.of("tc", "qdisc", "add", "dev", "eth0", "root"));
            netem.addAll(NETEM);
            try {
                lab.shOn(node, netem.toArray(new String[0]));
                applied = "tc " + String.join(" ", NETEM) + " on both ends";
                continue;
            } catch (IOException e) {
                if (!String.valueOf(e.getMessage()).contains("unknown")) {
                    throw e;
                }
            }
            lab.shOn(node, "tc", "qdisc", "add", "dev", "eth0", "root", "tbf", "rate", "20mbit", "burst", "32kb",
                    "latency", "20ms");
            applied = "no netem in this kernel: tc tbf 20 Mbit/s, queue <= 20 ms";
            if (NetnsLab.onPath("iptables")) {
                lab.shOn(node, "iptables", "-A", "OUTPUT", "-o", "eth0", "-m", "statistic", "--mode", "random",
                        "--probability", "0.01", "-j", "DROP");
                applied += " + iptables random drop 1%";
            } else {
                applied += " (no iptables: loss only from the bucket's tail drops)";
            }
            applied += " on both ends";
        }
        return applied;
    }

    /** TCP segments retransmitted so far by both nodes (their namespaces' /proc/net/snmp). */
    private static long retransmits(NetnsLab lab) throws IOException, InterruptedException {
        long sum = 0;
        for (int node = 0; node < 2; node++) {
            String[] lines = lab.shOn(node, "cat", "/proc/net/snmp").split("\n");
            for (int i = 0; i + 1 < lines.length; i++) {
                if (lines[i].startsWith("Tcp:") && lines[i + 1].startsWith("Tcp:")) {
                    List<String> names = Arrays.asList(lines[i].trim().split("\\s+"));
                    String[] values = lines[i + 1].trim().split("\\s+");
                    int at = names.indexOf("RetransSegs");
                    if (at > 0 && at < values.length) {
                        sum += Long.parseLong(values[at]);
                    }
                    break;
                }
            }
        }
        return sum;
    }

    // ------------------------------------------------------------------ helpers

    private static void requireNamespaces() throws ChaosSkipped {
        String why = NetnsLab.unavailable();
        if (why != null) {
            throw new ChaosSkipped(why);
        }
    }

    /** Starts a worker of {@code job} on {@code node}, asking for rank {@code node}. */
    private static Worker startOn(NetnsLab lab, ChaosJob job, int node) throws IOException {
        return job.start(lab.exec(node), node, List.of("--discovery", "members", "--members", lab.members(),
                "--host", lab.address(node), "--cluster-port", Integer.toString(lab.clusterPort(node)),
                "--rendezvous-timeout", "90"));
    }

    private static double seconds(long since) {
        return (System.nanoTime() - since) / 1e9;
    }
}
