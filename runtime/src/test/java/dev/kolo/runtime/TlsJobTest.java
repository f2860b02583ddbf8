package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.internal.security.TlsMaterial;
import io.vertx.core.internal.VertxInternal;
import io.vertx.core.spi.cluster.NodeInfo;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * A job with TLS (KOLO_TLS_CERT, KOLO_TLS_KEY, KOLO_TLS_CA) and a secret as real workers of this JVM, each with its own
 * certificate of the job's CA made by keytool: collectives are right; the event bus requires a client
 * certificate of that CA; a worker of another CA cannot take part and says why in bounded time; partial or
 * broken settings stop a worker before it joins anything.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class TlsJobTest {
    private final String job = LocalJob.uniqueName("tls");
    private TestCerts certs;
    private LocalJob secured;

    /** With a secret too, as deployments would: proofs and sealed control messages then travel inside TLS. */
    private KoloConfig.Builder config(TestCerts.Identity id) {
        return id.applyTo(LocalJob.config(job, 2)).set(Settings.JOB_SECRET, "secret-of-the-tls-test-job");
    }

    @BeforeAll
    void form() throws Exception {
        certs = TestCerts.shared();
        secured = LocalJob.start(job, 2, i -> config(i == 0 ? certs.worker0 : certs.worker1).build());
    }

    @AfterAll
    void close() {
        if (secured != null) {
            secured.close();
        }
    }

    private static double input(int rank, int i) {
        return Math.cos(rank * 7919.0 + i) * 100;
    }

    private void allreducesMatchTheReference(String tag) throws Exception {
        // 0, 1, odd (the direct path) and a few MiB, odd (the pipelined ring).
        for (int count : new int[] {0, 1, 1001, (3 << 17) + 5}) {
            List<double[]> results = secured.onAll(k -> {
                double[] v = new double[count];
                for (int i = 0; i < count; i++) {
                    v[i] = input(k.rank(), i);
                }
                return k.allreduce(tag + "/" + count, Tensor.of(v, count), ReduceOp.SUM).toDoubleArray();
            });
            for (int i = 0; i < count; i++) {
                double expected = input(0, i) + input(1, i);
                assertEquals(expected, results.get(0)[i], 1e-9, "element " + i + " of " + count);
            }
            assertArrayEquals(results.get(0), results.get(1));
        }
    }

    @Test
    void aTlsJobComputesCorrectly() throws Exception {
        for (Kolo k : secured.workers) {
            assertEquals(2, k.size());
            assertTrue(k.clusterNode().config().tls());
            assertTrue(k.clusterNode().authenticated());
        }
        allreducesMatchTheReference("first");
    }

    @Test
    void theEventBusRequiresACertificateOfTheJobCa() throws Exception {
        NodeInfo node = ((VertxInternal) secured.workers.get(0).clusterNode().vertx()).clusterManager().getNodeInfo();
        // A worker of the job: the server presents worker0's certificate and accepts ours.
        try (SSLSocket s = socket(certs.worker1.context(), node)) {
            s.startHandshake();
            X509Certificate peer = (X509Certificate) s.getSession().getPeerCertificates()[0];
            assertTrue(peer.getSubjectX500Principal().getName().contains("CN=worker0"), peer.toString());
            assertEquals("TLSv1.3", s.getSession().getProtocol());
        }
        // Another CA's worker does not trust the server (and would not be trusted).
        try (SSLSocket s = socket(certs.stranger.context(), node)) {
            assertThrows(SSLException.class, s::startHandshake);
        }
        // Trusting the server but without a certificate of its own: the server refuses it (TLS 1.3 says so
        // after the client finished, on the first read).
        try (SSLSocket s = socket(trustOnly(certs.worker0.ca()), node)) {
            s.startHandshake();
            s.setSoTimeout(5000);
            try {
                assertEquals(-1, s.getInputStream().read(), "closed without a client certificate");
            } catch (SSLException expected) {
                // certificate_required
            }
        }
    }

    @Test
    void aWorkerOfAnotherCaCannotTakePartAndSaysWhy() throws Exception {
        long t0 = System.nanoTime();
        KoloException e = assertThrows(KoloException.class,
                () -> Kolo.init(config(certs.stranger).rendezvousTimeout(Duration.ofSeconds(6)).build()));
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0);
        assertTrue(seconds < 30, "failed only after " + seconds + " s");
        assertTrue(e.getMessage().contains("timed out") && e.getMessage().contains("KOLO_TLS_CA"), e.getMessage());
        for (Kolo k : secured.workers) {
            assertEquals(2, k.size());
            assertEquals(1, k.generation());
        }
        allreducesMatchTheReference("after-stranger");
    }

    @Test
    void partialOrBrokenSettingsStopTheWorkerAtStartUp() {
        TestCerts.Identity w0 = certs.worker0;
        String onlyCert = assertThrows(IllegalArgumentException.class,
                () -> KoloConfig.builder().set(Settings.TLS_CERT, w0.cert().toString()).build()).getMessage();
        assertTrue(onlyCert.contains("KOLO_TLS_KEY and KOLO_TLS_CA are not set"), onlyCert);
        String noKey = assertThrows(IllegalArgumentException.class, () -> KoloConfig.fromSource(Map.of(
                "KOLO_TLS_CERT", w0.cert().toString(), "KOLO_TLS_CA", w0.ca().toString())::get)).getMessage();
        assertTrue(noKey.contains("KOLO_TLS_KEY is not set"), noKey);
        assertTrue(KoloConfig.fromSource(Map.of("KOLO_TLS_CERT", "c", "KOLO_TLS_KEY", "k", "KOLO_TLS_CA", "a")::get).tls());

        io.vertx.core.eventbus.EventBusOptions bus = TlsMaterial.load(config(w0).build())
                .secure(new io.vertx.core.eventbus.EventBusOptions());
        assertTrue(bus.isSsl() && !bus.isTrustAll() && bus.getClientAuth() == io.vertx.core.http.ClientAuth.REQUIRED
                && bus.getEnabledSecureTransportProtocols().equals(java.util.Set.of("TLSv1.3")), "event bus TLS options");

        String otherKey = startError(config(w0).set(Settings.TLS_KEY, certs.worker1.key().toString()));
        assertTrue(otherKey.contains("is not the private key of the certificate in KOLO_TLS_CERT"), otherKey);
        String otherCa = startError(config(w0).set(Settings.TLS_CERT, certs.stranger.cert().toString())
                .set(Settings.TLS_KEY, certs.stranger.key().toString()));
        assertTrue(otherCa.contains("is not accepted by KOLO_TLS_CA"), otherCa);
        String missing = startError(config(w0).set(Settings.TLS_CA, w0.ca().resolveSibling("nowhere.pem").toString()));
        assertTrue(missing.contains("KOLO_TLS_CA: no such file"), missing);
        String certAsKey = startError(config(w0).set(Settings.TLS_KEY, w0.cert().toString()));
        assertTrue(certAsKey.contains("KOLO_TLS_KEY") && certAsKey.contains("BEGIN PRIVATE KEY"), certAsKey);
    }

    private static String startError(KoloConfig.Builder b) {
        long t0 = System.nanoTime();
        String m = assertThrows(KoloException.class, () -> Kolo.init(b.build())).getMessage();
        assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(10), "refused before joining anything");
        return m;
    }

    private static SSLSocket socket(SSLContext context, NodeInfo node) throws Exception {
        SSLSocket s = (SSLSocket) context.getSocketFactory().createSocket(node.host(), node.port());
        s.setSoTimeout(5000);
        return s;
    }

    private static SSLContext trustOnly(Path caPem) throws Exception {
        KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
        ks.load(null, null);
        try (InputStream in = Files.newInputStream(caPem)) {
            int i = 0;
            for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in)) {
                ks.setCertificateEntry("ca" + i++, c);
            }
        }
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ks);
        SSLContext context = SSLContext.getInstance("TLSv1.3");
        context.init(null, tmf.getTrustManagers(), null);
        return context;
    }
}
