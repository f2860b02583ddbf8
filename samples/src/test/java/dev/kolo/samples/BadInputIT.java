package dev.kolo.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** User mistakes: one line on stderr naming the problem and the fix, a non-zero exit, no stack trace. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class BadInputIT {

    private static String oneLineError(String... args) throws Exception {
        return oneLineError(java.util.Map.of(), args);
    }

    /** Exit status of the last {@link #oneLineError} run. */
    private static int lastStatus;

    private static String oneLineError(java.util.Map<String, String> env, String... args) throws Exception {
        try (WorkerProcess w = WorkerProcess.start(env, args)) {
            int code = w.exitCode(90);
            lastStatus = code;
            assertNotEquals(0, code, w.transcript());
            List<String> err = w.err.stream().filter(l -> !l.isBlank()).toList();
            assertEquals(1, err.size(), "expected exactly one line on stderr:\n" + w.transcript());
            String line = err.get(0);
            assertFalse(line.contains("Exception") || line.trim().startsWith("at "), line);
            assertTrue(w.out.stream().noneMatch(l -> l.trim().startsWith("at ")), "stack trace:\n" + w.transcript());
            return line;
        }
    }

    @Test
    void unknownFlag() throws Exception {
        String line = oneLineError("--bogus-flag", "3");
        assertTrue(line.contains("--bogus-flag") && line.contains("--help"), line);
        assertEquals(2, lastStatus, "a wrong flag is a usage error");
    }

    @Test
    void unknownLaunchFlag() throws Exception {
        String line = oneLineError("launch", "-np", "2", "--nope");
        assertTrue(line.contains("--nope"), line);
    }

    @Test
    void npBelowOne() throws Exception {
        assertTrue(oneLineError("--np", "0").contains("--np must be a whole number from 1 to 4096 (got '0')"));
        assertEquals(78, lastStatus, "a configuration error has a status of its own (EX_CONFIG)");
        assertTrue(oneLineError("launch", "-np", "0").contains("-np must be at least 1"));
        assertTrue(oneLineError("--np", "two").contains("'two'"));
    }

    @Test
    void dataPortInUse() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            String line = oneLineError("--data-port", Integer.toString(taken.getLocalPort()));
            assertTrue(line.contains("data port " + taken.getLocalPort()) && line.contains("KOLO_DATA_PORT"), line);
            assertEquals(1, lastStatus, "a port taken now may be free later: not a configuration error");
        }
    }

    @Test
    void clusterPortInUse() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            String port = Integer.toString(taken.getLocalPort());
            String line = oneLineError("--discovery", "members", "--members", "127.0.0.1:" + port,
                    "--cluster-port", port, "--rendezvous-timeout", "20", "--insecure");
            assertTrue(line.contains("cluster port " + port) && line.contains("KOLO_CLUSTER_PORT"), line);
        }
    }

    @Test
    void noSecretOutsideLocalDiscovery() throws Exception {
        String line = oneLineError("--discovery", "members", "--members", "127.0.0.1:5701");
        assertTrue(line.contains("without KOLO_JOB_SECRET") && line.contains("set the same KOLO_JOB_SECRET on every "
                + "worker") && line.contains("KOLO_INSECURE=true"), line);
        // Also from the environment, as on Kubernetes (a Secret missing from the pod).
        String k8s = oneLineError(java.util.Map.of("KOLO_DISCOVERY", "kubernetes", "KOLO_SERVICE_DNS",
                "kolo.default.svc.cluster.local", "KOLO_HOST", "127.0.0.1"));
        assertTrue(k8s.contains("discovery 'kubernetes' without KOLO_JOB_SECRET"), k8s);
    }

    @Test
    void weakSecretIsRefusedWithoutShowingIt() throws Exception {
        String line = oneLineError(java.util.Map.of("KOLO_JOB_SECRET", "hunter2"), "--np", "1");
        assertTrue(line.contains("KOLO_JOB_SECRET must be at least 16 random characters") && !line.contains("hunter2"),
                line);
        assertEquals(78, lastStatus);
    }

    @Test
    void partialOrMissingTlsSettings() throws Exception {
        String partial = oneLineError("--tls-cert", "/tmp/worker.pem", "--np", "1");
        assertTrue(partial.contains("KOLO_TLS_KEY and KOLO_TLS_CA are not set"), partial);
        String missing = oneLineError(java.util.Map.of("KOLO_TLS_CA", "/nonexistent/ca.pem"), "--tls-cert",
                "/nonexistent/w.pem", "--tls-key", "/nonexistent/w.key", "--np", "1");
        assertTrue(missing.contains("KOLO_TLS_CERT: no such file /nonexistent/w.pem"), missing);
        assertEquals(78, lastStatus, "a TLS file that is not there is a configuration error");
    }

    @Test
    void unresolvableMember() throws Exception {
        String line = oneLineError("--discovery", "members", "--members", "no-such-host.invalid:5701", "--insecure");
        assertTrue(line.contains("no-such-host.invalid") && line.contains("--members"), line);
    }

    @Test
    void unreachableMember() throws Exception {
        int closed;
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            closed = s.getLocalPort(); // free again once closed: nothing listens there
        }
        // Hazelcast alone may spend ~10 s probing the unreachable member on a loaded machine: leave time for rendezvous.
        String line = oneLineError("--discovery", "members", "--np", "2", "--rendezvous-timeout", "20", "--insecure",
                "--members", "127.0.0.1:" + closed + ",127.0.0.1:" + (closed == 65535 ? closed - 1 : closed + 1),
                "--cluster-port", Integer.toString(closed == 65535 ? closed - 1 : closed + 1));
        assertTrue(line.contains("members never reached: 127.0.0.1:" + closed), line);
        assertTrue(line.contains("1 of 2 workers arrived"), line);
    }
}
