package dev.kolo.runtime;

import dev.kolo.runtime.internal.security.TlsMaterial;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;

/**
 * Throwaway certificates made with the JDK's {@code keytool} (run as a process, as a user would): the job's
 * CA with two workers, and a second CA with a stranger of its own. EC P-256 keys, valid two days. Made once
 * per test JVM (keytool is a JVM start per step) in a temporary directory.
 */
public final class TestCerts {
    private static final String PASS = "changeit";
    private static TestCerts shared;

    /** PEM files of one worker: certificate chain, PKCS#8 key, and the CA bundle it trusts. */
    public record Identity(Path cert, Path key, Path ca) {
        /** @param b a configuration to add this identity's TLS settings to @return b */
        public KoloConfig.Builder applyTo(KoloConfig.Builder b) {
            return b.set(Settings.TLS_CERT, cert.toString()).set(Settings.TLS_KEY, key.toString()).set(Settings.TLS_CA, ca.toString());
        }

        /** @return the TLS context Kolo builds from these files */
        public SSLContext context() {
            return TlsMaterial.load(applyTo(KoloConfig.builder()).build()).context();
        }
    }

    public final Path dir;
    /** Workers of the job's CA. */
    public final Identity worker0;
    public final Identity worker1;
    /** A worker of another CA, trusting only that CA. */
    public final Identity stranger;

    private TestCerts(Path dir) throws Exception {
        this.dir = dir;
        CompletableFuture<Identity[]> job = CompletableFuture.supplyAsync(() -> chain(dir, "job-ca", "worker0", "worker1"));
        CompletableFuture<Identity[]> other = CompletableFuture.supplyAsync(() -> chain(dir, "other-ca", "stranger"));
        Identity[] ours = job.get(120, TimeUnit.SECONDS);
        this.worker0 = ours[0];
        this.worker1 = ours[1];
        this.stranger = other.get(120, TimeUnit.SECONDS)[0];
    }

    /** @return the certificates of this test JVM, made on first use */
    public static synchronized TestCerts shared() throws Exception {
        if (shared == null) {
            Path dir = Files.createTempDirectory("kolo-tls-test");
            dir.toFile().deleteOnExit();
            shared = new TestCerts(dir);
        }
        return shared;
    }

    /** A CA and workers signed by it; each worker's file holds its certificate followed by the CA's. */
    private static Identity[] chain(Path dir, String ca, String... workers) {
        try {
            Path caStore = dir.resolve(ca + ".p12");
            Path caPem = dir.resolve(ca + ".pem");
            keytool("-genkeypair", "-alias", ca, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=" + ca,
                    "-ext", "bc:c", "-validity", "2", "-keystore", caStore.toString(), "-storetype", "PKCS12");
            keytool("-exportcert", "-rfc", "-alias", ca, "-keystore", caStore.toString(), "-file", caPem.toString());
            List<Identity> out = new ArrayList<>();
            for (String w : workers) {
                Path store = dir.resolve(w + ".p12");
                Path csr = dir.resolve(w + ".csr");
                Path leaf = dir.resolve(w + "-leaf.pem");
                keytool("-genkeypair", "-alias", w, "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=" + w,
                        "-validity", "2", "-keystore", store.toString(), "-storetype", "PKCS12");
                keytool("-certreq", "-alias", w, "-keystore", store.toString(), "-file", csr.toString());
                keytool("-gencert", "-rfc", "-alias", ca, "-keystore", caStore.toString(), "-infile", csr.toString(),
                        "-outfile", leaf.toString(), "-validity", "2", "-ext", "ku:c=digitalSignature",
                        "-ext", "eku=serverAuth,clientAuth");
                Path cert = dir.resolve(w + ".pem");
                Files.writeString(cert, Files.readString(leaf) + Files.readString(caPem));
                Path key = dir.resolve(w + ".key");
                Files.writeString(key, pkcs8Pem(store, w));
                out.add(new Identity(cert, key, caPem));
            }
            return out.toArray(Identity[]::new);
        } catch (Exception e) {
            throw new IllegalStateException("cannot make test certificates: " + e.getMessage(), e);
        }
    }

    /** The key's own encoding is PKCS#8 already: only the PEM armour is added. */
    private static String pkcs8Pem(Path store, String alias) throws Exception {
        KeyStore ks = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            ks.load(in, PASS.toCharArray());
        }
        PrivateKey key = (PrivateKey) ks.getKey(alias, PASS.toCharArray());
        String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(key.getEncoded());
        return "-----BEGIN PRIVATE KEY-----\n" + body + "\n-----END PRIVATE KEY-----\n";
    }

    private static void keytool(String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.add("-J-XX:TieredStopAtLevel=1"); // a short-lived tool: quick start over peak speed
        command.addAll(List.of(args));
        command.addAll(List.of("-storepass", PASS, "-noprompt"));
        if (args[0].equals("-genkeypair")) {
            command.addAll(List.of("-keypass", PASS));
        }
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IllegalStateException("keytool did not finish in 60 s: " + command);
        }
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new IllegalStateException("keytool failed (" + p.exitValue() + "): " + command + "\n" + output);
        }
    }
}
