package dev.kolo.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.samples.netns.NetnsLab;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code launch -H} across three hosts: network namespaces on this machine, each running its own OpenSSH
 * server with a host key and an authorized client key made for this test. The launcher runs on the first host
 * and reaches every host (itself included) over SSH. Needs root, iproute2 and openssh-server; skipped otherwise.
 * Everything (servers, workers, namespaces, keys) is removed at the end, also when a test fails.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class MultiHostLaunchIT {
    static final Path SSHD = Path.of("/usr/sbin/sshd");
    static final int HOSTS = 3;

    @TempDir
    static Path tmp;
    static NetnsLab lab;
    static final List<Process> servers = new ArrayList<>();
    static final List<String> sshOptions = new ArrayList<>();
    static Path classes;

    @BeforeAll
    static void hostsWithSshServers() throws Exception {
        String why = NetnsLab.unavailable();
        Assumptions.assumeTrue(why == null, "multi-host launch test skipped: " + why);
        Assumptions.assumeTrue(Files.isExecutable(SSHD), "multi-host launch test skipped: no " + SSHD
                + " (Debian package openssh-server)");
        classes = OwnProgram.compile(tmp);
        lab = NetnsLab.createIsolated(HOSTS);
        Path keys = Files.createDirectories(tmp.resolve("keys"));
        run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "kolo-test-client", "-f", keys.resolve("client")
                .toString());
        run("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "kolo-test-host", "-f", keys.resolve("host")
                .toString());
        Files.copy(keys.resolve("client.pub"), keys.resolve("authorized_keys"));
        String hostKey = Files.readString(keys.resolve("host.pub")).trim();
        StringBuilder knownHosts = new StringBuilder();
        for (int i = 0; i < HOSTS; i++) {
            knownHosts.append(lab.address(i)).append(' ').append(hostKey).append('\n');
        }
        Files.writeString(keys.resolve("known_hosts"), knownHosts);
        Files.writeString(keys.resolve("sshd_config"), String.join("\n",
                "Port 22", "HostKey " + keys.resolve("host"), "AuthorizedKeysFile " + keys.resolve("authorized_keys"),
                "PermitRootLogin prohibit-password", "PasswordAuthentication no", "KbdInteractiveAuthentication no",
                "UsePAM no", "StrictModes no", "ClientAliveInterval 2", "ClientAliveCountMax 3", "LogLevel ERROR",
                "") + "\n");
        Files.createDirectories(Path.of("/run/sshd")); // the server's privilege separation directory
        for (int i = 0; i < HOSTS; i++) {
            List<String> cmd = new ArrayList<>(lab.exec(i));
            cmd.addAll(List.of(SSHD.toString(), "-D", "-e", "-f", keys.resolve("sshd_config").toString(),
                    "-o", "PidFile=" + keys.resolve("sshd-" + i + ".pid")));
            servers.add(new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(tmp.resolve("sshd-" + i + ".log").toFile()).start());
        }
        sshOptions.addAll(List.of("IdentityFile=" + keys.resolve("client"), "IdentitiesOnly=yes",
                "UserKnownHostsFile=" + keys.resolve("known_hosts"), "StrictHostKeyChecking=yes", "LogLevel=ERROR"));
        for (int i = 0; i < HOSTS; i++) {
            awaitSsh(i);
        }
    }

    @AfterAll
    static void removeEverything() {
        servers.forEach(p -> {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        });
        if (lab != null) {
            lab.close(); // kills whatever still runs in the namespaces, then deletes them
        }
    }

    /** A program written with no JVM option gets Kolo's on every host over SSH: nothing warns about access. */
    @Test
    void aProgramOfItsOwnRunsOnEveryHost() throws Exception {
        try (WorkerProcess launch = launch(List.of("-np", "3", "-H", hosts()), OwnProgram.command(classes, "sum"))) {
            assertEquals(0, launch.exitCode(150), launch.transcript());
            for (int i = 0; i < HOSTS; i++) {
                int r = i;
                assertEquals(List.of("[" + r + "] result rank=" + r + " size=3 sum=6 secret=true "
                                + "secret_on_command_line=false host=" + lab.address(r)),
                        launch.lines(l -> l.contains("result rank=" + r)), launch.transcript());
            }
            assertEquals(List.of(), OwnProgramLaunchIT.accessWarnings(launch.out), launch.transcript());
            assertNothingLeftOnAnyHost();
        }
    }

    /**
     * A script that runs java, on two hosts: each host's wrapper appends Kolo's options to that host's
     * JDK_JAVA_OPTIONS (the launcher's environment does not cross SSH).
     */
    @Test
    void aScriptOnEveryHostGetsTheOptionsInItsJdkJavaOptions() throws Exception {
        List<String> script = new ArrayList<>(List.of("sh", "-c", "exec \"$@\"", "sh"));
        script.addAll(OwnProgram.command(classes, "sum"));
        String hosts = lab.address(1) + "," + lab.address(2);
        try (WorkerProcess launch = launch(List.of("-np", "2", "-H", hosts), script)) {
            assertEquals(0, launch.exitCode(150), launch.transcript());
            assertEquals(2, launch.lines(l -> l.contains("result rank=") && l.contains("size=2 sum=3")).size(),
                    launch.transcript());
            for (int r = 0; r < 2; r++) {
                String rank = "[" + r + "] ";
                assertEquals(List.of(rank + "NOTE: Picked up JDK_JAVA_OPTIONS: " + String.join(" ",
                        dev.kolo.runtime.jvm.JvmOptions.all())), launch.lines(l -> l.startsWith(rank + "NOTE: ")),
                        launch.transcript());
            }
            assertEquals(List.of(), OwnProgramLaunchIT.accessWarnings(launch.out), launch.transcript());
            assertNothingLeftOnAnyHost();
        }
    }

    /**
     * Two slots on the first host, one on the second: the first host's workers share an address, so their bytes
     * move through shared memory; the second host is reached over TCP. Every result is right.
     */
    @Test
    void slotsOfOneHostShareMemory() throws Exception {
        String slots = lab.address(0) + ":2," + lab.address(1) + ":1";
        try (WorkerProcess launch = launch(List.of("-np", "3", "-H", slots), OwnProgram.command(classes, "sum"))) {
            assertEquals(0, launch.exitCode(150), launch.transcript());
            for (int r = 0; r < 3; r++) {
                int rank = r;
                assertEquals(1, launch.lines(l -> l.contains("result rank=" + rank + " size=3 sum=6 ")).size(),
                        launch.transcript());
            }
            // Ranks 0 and 1 (the first host's) reach each other, and only each other, through shared memory.
            assertEquals(List.of("[0] rank 0 reaches rank [1]", "[1] rank 1 reaches rank [0]"),
                    launch.lines(l -> l.contains("through shared memory")).stream()
                            .map(l -> l.substring(0, 3) + l.replaceAll(".*( rank \\d reaches rank \\[\\d]).*", "$1"))
                            .sorted().toList(), launch.transcript());
            assertNothingLeftOnAnyHost();
        }
    }

    @Test
    void aFixedJobStopsOnEveryHostWhenOneWorkerDies() throws Exception {
        try (WorkerProcess launch = launch(List.of("-np", "3", "-H", hosts(), "--grace", "2"),
                OwnProgram.command(classes, "steps"))) {
            for (int r = 0; r < HOSTS; r++) {
                int rank = r;
                launch.awaitLine(l -> l.startsWith("[" + rank + "] step 3 "), 120);
            }
            killWorkerOn(1);
            int code = launch.exitCode(90);
            assertNotEquals(0, code, launch.transcript());
            assertEquals(1, launch.lines(l -> l.matches("\\[launch] worker 1 .*stopping the others")).size(),
                    launch.transcript());
            assertNothingLeftOnAnyHost();
        }
    }

    /**
     * Host 2's link goes down: both ends of its SSH connection notice, and the launch stops every worker. The
     * launcher's keep-alive is shortened to 1 s (an option given overrides the launcher's default of 5 s).
     */
    @Test
    void aLostSshConnectionStopsTheJobOnEveryHost() throws Exception {
        try (WorkerProcess launch = launch(List.of("-np", "3", "-H", hosts(), "--grace", "2", "--ssh-option",
                "ServerAliveInterval=1"), OwnProgram.command(classes, "steps"))) {
            for (int r = 0; r < HOSTS; r++) {
                int rank = r;
                launch.awaitLine(l -> l.startsWith("[" + rank + "] step 3 "), 120);
            }
            lab.cut(2);
            try {
                int code = launch.exitCode(120);
                assertNotEquals(0, code, launch.transcript());
                assertEquals(1, launch.lines(l -> l.matches("\\[launch] worker 2 on .*: failed with exit status 255 "
                        + "from ssh .*stopping the others")).size(), launch.transcript());
                assertNothingLeftOnAnyHost();
            } finally {
                lab.restore(2);
            }
        }
    }

    @Test
    void anElasticJobGoesOnWhenOneHostsWorkerDies() throws Exception {
        try (WorkerProcess launch = launch(List.of("-np", "3", "--min-np", "2", "-H", hosts()),
                List.of("--max-steps", "60", "--commit-every", "5", "--log-every", "5"))) {
            launch.awaitLine(l -> l.startsWith("[2] kolo: step=10 "), 150);
            killWorkerOn(2);
            int code = launch.exitCode(180);
            assertEquals(0, code, launch.transcript());
            assertEquals(1, launch.lines(l -> l.matches("\\[launch] worker 2 .*the elastic job goes on without it"))
                    .size(), launch.transcript());
            List<String> done = launch.lines(l -> l.matches("\\[[01]] kolo: done rank=\\d size=2 .*"));
            assertEquals(2, done.size(), launch.transcript());
            assertEquals(1, done.stream().map(l -> l.replaceAll(".*checksum=", "")).distinct().count(),
                    "the survivors end with equal checksums\n" + launch.transcript());
            assertNothingLeftOnAnyHost();
        }
    }

    private static WorkerProcess launch(List<String> launchOptions, List<String> command) throws IOException {
        List<String> args = new ArrayList<>(List.of("launch"));
        args.addAll(launchOptions);
        sshOptions.forEach(o -> args.addAll(List.of("--ssh-option", o)));
        args.add("--");
        args.addAll(command);
        return WorkerProcess.start(lab.exec(0), Map.of(), args);
    }

    private static String hosts() {
        List<String> h = new ArrayList<>();
        for (int i = 0; i < HOSTS; i++) {
            h.add(lab.address(i));
        }
        return String.join(",", h);
    }

    /** SIGKILL to the worker (the JVM) on host {@code node}. */
    private static void killWorkerOn(int node) throws Exception {
        List<ProcessHandle> workers = workersOn(node);
        assertEquals(1, workers.size(), "one worker runs on host " + node);
        workers.get(0).destroyForcibly();
    }

    /** The JVMs on host {@code node} other than a launcher. */
    private static List<ProcessHandle> workersOn(int node) throws Exception {
        return lab.processes(node).stream().filter(p -> p.info().command().orElse("").endsWith("/java"))
                .filter(p -> !p.info().arguments().map(a -> List.of(a).contains("launch")).orElse(false)).toList();
    }

    /** Within 20 s of the launch's end, nothing but the SSH servers runs on any host. */
    private static void assertNothingLeftOnAnyHost() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        List<String> left;
        do {
            left = new ArrayList<>();
            for (int i = 0; i < HOSTS; i++) {
                long server = servers.get(i).pid();
                for (ProcessHandle p : lab.processes(i)) {
                    if (p.pid() != server && p.isAlive()) {
                        left.add("host " + i + ": " + p.pid() + " " + p.info().commandLine().orElse("?"));
                    }
                }
            }
            if (left.isEmpty()) {
                return;
            }
            Thread.sleep(200);
        } while (System.nanoTime() < deadline);
        throw new AssertionError("left running after the launch ended: " + left);
    }

    private static void awaitSsh(int node) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        String last = "";
        while (System.nanoTime() < deadline) {
            List<String> cmd = new ArrayList<>(lab.exec(0));
            cmd.addAll(List.of("ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=2"));
            sshOptions.forEach(o -> cmd.addAll(List.of("-o", o)));
            cmd.addAll(List.of(lab.address(node), "true"));
            Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            p.getOutputStream().close();
            last = new String(p.getInputStream().readAllBytes());
            if (p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0) {
                return;
            }
            Thread.sleep(200);
        }
        throw new AssertionError("the SSH server of host " + node + " does not answer: " + last + "\n"
                + Files.readString(tmp.resolve("sshd-" + node + ".log")));
    }

    private static void run(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes());
        assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, String.join(" ", cmd) + ": " + out);
    }
}
