package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kolo.testing.ChildJvms;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two worker processes of one job on this host, started with the defaults: each binds every thread to its own half
 * of the CPUs this host gives them, together all of them, before {@code Kolo.init} returns; with {@code KOLO_CPU_BIND=off} every thread stays where
 * it started. The kernel's own report ({@code /proc/self/task/N/status}) is the judge.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class CoLocatedCpuBindingTest {

    @Test
    void coLocatedWorkersTakeDisjointEqualSharesOfTheHostsCpus() throws Exception {
        Set<Integer> host = hostCpus();
        assumeTrue(host.size() >= 2, "one CPU: nothing to share");
        Map<Integer, String> lists = runJob(Map.of());
        Set<Integer> union = new TreeSet<>();
        for (Map.Entry<Integer, String> e : lists.entrySet()) {
            assertTrue(!e.getValue().contains(";"), "every thread of rank " + e.getKey() + " on the same CPUs: "
                    + e.getValue());
            Set<Integer> share = parse(e.getValue());
            assertEquals(host.size() / 2, share.size(), "rank " + e.getKey() + " takes half of " + host + ": " + share);
            for (int cpu : share) {
                assertTrue(union.add(cpu), "CPU " + cpu + " given to both ranks: " + lists);
            }
        }
        assertTrue(host.containsAll(union), "shares within the host's CPUs " + host + ": " + lists);
    }

    @Test
    void offLeavesEveryThreadOnTheCpusItStartedWith() throws Exception {
        Set<Integer> host = hostCpus();
        Map<Integer, String> lists = runJob(Map.of("KOLO_CPU_BIND", "off"));
        for (Map.Entry<Integer, String> e : lists.entrySet()) {
            assertEquals(host, parse(e.getValue()), "rank " + e.getKey() + " unbound");
        }
    }

    /**
     * The reported defect: ranks split the host's CPUs as if each had been given all of them. Ranks 0 and 1 are
     * given every CPU, rank 2 only the last (as a container of its own under a static CPU manager): 0 and 1 split
     * theirs between the two of them, and rank 2 keeps its own, not a third of anything.
     */
    @Test
    void ranksSplitOnlyTheCpusTheyWereGivenTogether() throws Exception {
        Set<Integer> host = hostCpus();
        assumeTrue(host.size() >= 2, "one CPU: nothing to share");
        int last = ((TreeSet<Integer>) host).last();
        Map<Integer, String> lists = runJob(3, r -> r == 2 ? List.of("taskset", "-c", Integer.toString(last))
                : List.of(), Map.of());
        assertEquals(Set.of(last), parse(lists.get(2)), "rank 2 keeps the CPU it was given: " + lists);
        Set<Integer> zero = parse(lists.get(0));
        Set<Integer> one = parse(lists.get(1));
        assertEquals(host.size() / 2, zero.size(), "rank 0 takes half of " + host + ": " + lists);
        assertEquals(host.size() / 2, one.size(), "rank 1 takes half of " + host + ": " + lists);
        Set<Integer> both = new TreeSet<>(zero);
        both.retainAll(one);
        assertEquals(Set.of(), both, "ranks 0 and 1 split the CPUs they share: " + lists);
    }

    /** @return rank -> the distinct CPU lists of its threads, ";"-separated */
    private static Map<Integer, String> runJob(Map<String, String> extra) throws Exception {
        return runJob(2, r -> List.of(), extra);
    }

    /**
     * Runs {@code np} workers, worker {@code r} with rank hint {@code r} under the command prefix {@code prefix(r)}.
     *
     * @return rank -> the distinct CPU lists of its threads, ";"-separated
     */
    private static Map<Integer, String> runJob(int np, java.util.function.IntFunction<List<String>> prefix,
                                               Map<String, String> extra) throws Exception {
        String job = LocalJob.uniqueName("cpus");
        int ports = LocalJob.freshPortRange();
        try (ChildJvms jvms = new ChildJvms()) {
            for (int i = 0; i < np; i++) {
                Map<String, String> env = new HashMap<>(Map.of("KOLO_JOB", job, "KOLO_NP", Integer.toString(np),
                        "KOLO_CLUSTER_PORT", Integer.toString(ports), "KOLO_METRICS_PORT", "0",
                        "KOLO_RANK_HINT", Integer.toString(i)));
                env.putAll(extra);
                List<String> cmd = new java.util.ArrayList<>(prefix.apply(i));
                cmd.addAll(List.of(ChildJvms.java(), "-Xmx256m", "-cp", System.getProperty("java.class.path"),
                        CpuBindingWorker.class.getName()));
                jvms.start(cmd, env);
            }
            Map<Integer, String> lists = new HashMap<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
            while (lists.size() < np) {
                String line = jvms.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                assertNotNull(line, "every worker reports its CPUs in time; got " + lists);
                int at = line.indexOf("cpus rank=");
                if (at >= 0) {
                    String[] f = line.substring(at + "cpus rank=".length()).split(" atInit=| threads=");
                    assertEquals(f[2].trim(), f[1].trim(), "rank " + f[0] + ": bound before Kolo.init returned");
                    lists.put(Integer.parseInt(f[0]), f[2].trim());
                }
            }
            return lists;
        }
    }

    private static Set<Integer> hostCpus() throws Exception {
        return parse(CpuBindingWorker.cpusAllowedList(Files.readString(Path.of("/proc/self/status"))));
    }

    /** The CPUs of a kernel list such as "0-3,6". */
    private static Set<Integer> parse(String list) {
        Set<Integer> cpus = new TreeSet<>();
        for (String part : list.split(",")) {
            String[] range = part.split("-");
            int from = Integer.parseInt(range[0].trim());
            int to = range.length > 1 ? Integer.parseInt(range[1].trim()) : from;
            for (int c = from; c <= to; c++) {
                cpus.add(c);
            }
        }
        return cpus;
    }
}
