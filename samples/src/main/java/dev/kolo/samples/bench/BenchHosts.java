package dev.kolo.samples.bench;

import dev.kolo.runtime.Settings;
import dev.kolo.samples.launch.ChildJvmOptions;
import dev.kolo.samples.launch.Launcher;
import dev.kolo.samples.netns.NetnsLab;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * A benchmark's workers spread over {@code hosts} hosts that are network namespaces of this machine (root only): each
 * host its own address on one bridge, its link optionally limited to a rate, {@code np / hosts} consecutive ranks per
 * host, members discovery with a fresh secret. Ranks of a host share memory; hosts talk TCP. The driver's own
 * {@code KOLO_*} settings (e.g. {@code KOLO_HIERARCHICAL}) reach every worker.
 */
final class BenchHosts {
    private BenchHosts() {
    }

    /**
     * Runs {@code bench NAME --worker -np N options...} on the hosts; rank 0's results to standard output.
     *
     * @return 0 if every worker exited 0, else the first failure's status
     */
    static int run(String bench, int np, int hosts, String rate, List<String> options) throws Exception {
        if (np % hosts != 0) {
            throw new IllegalArgumentException("--hosts must divide -np (got " + hosts + " for -np " + np + ")");
        }
        String why = NetnsLab.unavailable();
        if (why != null) {
            throw new IllegalArgumentException("--hosts needs network namespaces: " + why);
        }
        int perHost = np / hosts;
        try (NetnsLab lab = NetnsLab.createIsolated(hosts)) {
            if (rate != null) {
                for (int h = 0; h < hosts; h++) {
                    lab.limitRate(h, rate);
                }
            }
            List<String> members = new ArrayList<>();
            for (int h = 0; h < hosts; h++) {
                for (int l = 0; l < perHost; l++) {
                    members.add(lab.address(h) + ":" + (CLUSTER_PORT + l));
                }
            }
            String secret = UUID.randomUUID() + "-" + UUID.randomUUID();
            String job = "bench-hosts-" + UUID.randomUUID().toString().substring(0, 8);
            List<Process> workers = new ArrayList<>();
            List<Thread> pumps = new ArrayList<>();
            for (int rank = 0; rank < np; rank++) {
                int h = rank / perHost;
                List<String> java = new ArrayList<>(List.of(Paths.get(System.getProperty("java.home"), "bin", "java")
                        .toString(), "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp",
                        Launcher.absoluteClassPath(), Launcher.WORKER_MAIN, "bench", bench, "--worker", "-np",
                        Integer.toString(np)));
                java.addAll(options);
                List<String> cmd = new ArrayList<>(lab.exec(h));
                cmd.addAll(ChildJvmOptions.withOptions(java)); // Hazelcast's module access: no warning per worker
                ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
                Map<String, String> env = pb.environment();
                env.put("KOLO_JOB", job);
                env.put("KOLO_NP", Integer.toString(np));
                env.put("KOLO_DISCOVERY", "members");
                env.put("KOLO_MEMBERS", String.join(",", members));
                env.put("KOLO_HOST", lab.address(h));
                env.put("KOLO_CLUSTER_PORT", Integer.toString(CLUSTER_PORT + rank % perHost));
                env.put("KOLO_RANK_HINT", Integer.toString(rank));
                env.put("KOLO_JOB_SECRET", secret);
                env.put("KOLO_METRICS_PORT", "0");
                Process p = pb.start();
                p.getOutputStream().close();
                workers.add(p);
                int r = rank;
                Thread pump = new Thread(() -> {
                    try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(),
                            StandardCharsets.UTF_8))) {
                        for (String line; (line = in.readLine()) != null; ) {
                            BenchWorkers.rankZeroResults(r, line);
                        }
                    } catch (IOException ignored) {
                        // the worker is gone
                    }
                }, "bench-hosts-output-" + rank);
                pump.start();
                pumps.add(pump);
            }
            int status = 0;
            for (Process p : workers) {
                if (!p.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
                    System.err.println("bench: a worker did not finish within " + TIMEOUT_MINUTES + " minutes");
                    workers.forEach(Process::destroyForcibly);
                    return 1;
                }
                status = status != 0 ? status : p.exitValue();
                if (status != 0) {
                    workers.forEach(Process::destroyForcibly);
                }
            }
            for (Thread t : pumps) {
                t.join(5000);
            }
            return status;
        }
    }

    private static final int CLUSTER_PORT = Settings.CLUSTER_PORT.defaultValue();
    private static final int TIMEOUT_MINUTES = 30;
}
