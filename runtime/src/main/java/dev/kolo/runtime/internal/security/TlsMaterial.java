package dev.kolo.runtime.internal.security;

import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.Settings;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.core.http.ClientAuth;
import io.vertx.core.net.PemKeyCertOptions;
import io.vertx.core.net.PemTrustOptions;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManager;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509KeyManager;
import javax.net.ssl.X509TrustManager;

/**
 * This worker's TLS identity and the job's CA, read once at start-up from {@code KOLO_TLS_CERT},
 * {@code KOLO_TLS_KEY} and {@code KOLO_TLS_CA} with Vert.x's PEM support, and checked before the worker
 * joins anything: files readable and PEM, key matching the certificate, certificate chaining to the CA.
 * The same material serves the event bus ({@link #secure}) and the data plane ({@link #context}).
 */
public final class TlsMaterial {
    /** TLS 1.3 only: every worker runs this same version of Kolo, nothing older needs to be accepted. */
    public static final String PROTOCOL = "TLSv1.3";

    private final PemKeyCertOptions keyCert;
    private final PemTrustOptions trust;
    private final SSLContext context;
    private final String subject;

    private TlsMaterial(PemKeyCertOptions keyCert, PemTrustOptions trust, SSLContext context, String subject) {
        this.keyCert = keyCert;
        this.trust = trust;
        this.context = context;
        this.subject = subject;
    }

    /**
     * @return the material, or null when the worker runs without TLS
     * @throws KoloException naming the setting, the file and what is wrong with it
     */
    public static TlsMaterial load(KoloConfig config) {
        if (!config.tls()) {
            return null;
        }
        byte[] cert = read("KOLO_TLS_CERT", config.get(Settings.TLS_CERT));
        byte[] key = read("KOLO_TLS_KEY", config.get(Settings.TLS_KEY));
        byte[] ca = read("KOLO_TLS_CA", config.get(Settings.TLS_CA));
        requirePem("KOLO_TLS_CERT", config.get(Settings.TLS_CERT), cert, "CERTIFICATE", "this worker's certificate chain");
        requirePem("KOLO_TLS_CA", config.get(Settings.TLS_CA), ca, "CERTIFICATE", "the job's CA certificate(s)");
        String keyText = new String(key, StandardCharsets.US_ASCII);
        if (keyText.contains("ENCRYPTED PRIVATE KEY")) {
            throw new dev.kolo.runtime.KoloConfigurationException("KOLO_TLS_KEY (" + config.get(Settings.TLS_KEY) + ") is encrypted: Kolo needs an unencrypted "
                    + "PKCS#8 key (protect the file instead, e.g. a Kubernetes Secret with mode 0400); convert it with "
                    + "openssl pkcs8 -topk8 -nocrypt -in KEY -out key.pem");
        }
        requirePem("KOLO_TLS_KEY", config.get(Settings.TLS_KEY), key, "PRIVATE KEY", "this worker's private key (PKCS#8)");

        PemKeyCertOptions keyCert = new PemKeyCertOptions().addKeyValue(Buffer.buffer(key)).addCertValue(Buffer.buffer(cert));
        PemTrustOptions trust = new PemTrustOptions().addCertValue(Buffer.buffer(ca));
        KeyManagerFactory kmf;
        TrustManagerFactory tmf;
        // Vert.x turns PEM into key and trust managers for a Vertx; a short-lived one serves before the cluster starts.
        Vertx vertx = Vertx.vertx(new VertxOptions().setEventLoopPoolSize(1).setWorkerPoolSize(1)
                .setInternalBlockingPoolSize(1));
        try {
            try {
                kmf = keyCert.getKeyManagerFactory(vertx);
            } catch (Exception e) {
                throw new dev.kolo.runtime.KoloConfigurationException("KOLO_TLS_KEY (" + config.get(Settings.TLS_KEY) + ") and KOLO_TLS_CERT (" + config.get(Settings.TLS_CERT)
                        + ") cannot be loaded: " + e + "; the key must be an unencrypted PKCS#8 PEM key ('BEGIN PRIVATE "
                        + "KEY'; convert with openssl pkcs8 -topk8 -nocrypt) and the certificate PEM", e);
            }
            try {
                tmf = trust.getTrustManagerFactory(vertx);
            } catch (Exception e) {
                throw new dev.kolo.runtime.KoloConfigurationException("KOLO_TLS_CA (" + config.get(Settings.TLS_CA) + ") cannot be loaded: " + e, e);
            }
        } finally {
            try {
                vertx.close().toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                // its threads end with it; nothing of it is kept
            }
        }
        X509Certificate[] chain = certificates(config.get(Settings.TLS_CERT), cert);
        checkKeyMatches(config, kmf, chain[0]);
        checkChainsToCa(config, tmf, chain);
        try {
            SSLContext context = SSLContext.getInstance(PROTOCOL);
            context.init(kmf.getKeyManagers(), tmf.getTrustManagers(), new SecureRandom());
            return new TlsMaterial(keyCert, trust, context, chain[0].getSubjectX500Principal().getName());
        } catch (GeneralSecurityException e) {
            throw new dev.kolo.runtime.KoloConfigurationException("cannot set up TLS: " + e, e);
        }
    }

    /** @return the TLS context of data connections (a new engine per connection) */
    public SSLContext context() {
        return context;
    }

    /** @return this worker's certificate subject, for the start-up log */
    public String subject() {
        return subject;
    }

    /**
     * Turns on TLS for the clustered event bus: this worker's certificate, the job's CA, client certificates
     * required, server certificates checked too (not Vert.x's trust-all default), TLS 1.3 only. Vert.x's
     * cluster client checks no host name (peers are known by their node, and
     * here identified by the CA). The options are copied through JSON by Vert.x, which PEM values survive.
     */
    public EventBusOptions secure(EventBusOptions options) {
        return options.setSsl(true)
                .setKeyCertOptions(keyCert.copy())
                .setTrustOptions(trust.copy())
                .setTrustAll(false) // the event bus defaults to trusting any server certificate
                .setClientAuth(ClientAuth.REQUIRED)
                .setEnabledSecureTransportProtocols(Set.of(PROTOCOL))
                .setSslHandshakeTimeout(10).setSslHandshakeTimeoutUnit(TimeUnit.SECONDS);
    }

    private static byte[] read(String setting, String path) {
        try {
            return Files.readAllBytes(Path.of(path));
        } catch (NoSuchFileException e) {
            throw new dev.kolo.runtime.KoloConfigurationException(setting + ": no such file " + path + " (mount or create it, or unset KOLO_TLS_CERT, "
                    + "KOLO_TLS_KEY and KOLO_TLS_CA to run without TLS)");
        } catch (IOException | RuntimeException e) {
            throw new dev.kolo.runtime.KoloConfigurationException(setting + ": cannot read " + path + ": " + e, e);
        }
    }

    private static void requirePem(String setting, String path, byte[] bytes, String label, String what) {
        if (!new String(bytes, StandardCharsets.US_ASCII).contains("-----BEGIN " + label + "-----")) {
            throw new dev.kolo.runtime.KoloConfigurationException(setting + " (" + path + ") holds no '-----BEGIN " + label + "-----' block: it must "
                    + "be a PEM file with " + what);
        }
    }

    private static X509Certificate[] certificates(String path, byte[] pem) {
        try {
            return java.security.cert.CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(pem)).stream()
                    .map(c -> (X509Certificate) c).toArray(X509Certificate[]::new);
        } catch (CertificateException e) {
            throw new dev.kolo.runtime.KoloConfigurationException("KOLO_TLS_CERT (" + path + ") cannot be parsed: " + e, e);
        }
    }

    /** A key of another certificate would only show as a failed handshake on the peers: say so here. */
    private static void checkKeyMatches(KoloConfig config, KeyManagerFactory kmf, X509Certificate cert) {
        String algorithm = cert.getPublicKey().getAlgorithm();
        String signature = switch (algorithm) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            case "Ed25519", "Ed448", "EdDSA" -> algorithm;
            default -> null;
        };
        if (signature == null) {
            return; // nothing to check it with; the handshake will tell
        }
        for (KeyManager m : kmf.getKeyManagers()) {
            if (!(m instanceof X509KeyManager km)) {
                continue;
            }
            String[] aliases = km.getServerAliases(algorithm, null);
            if (aliases == null) {
                continue;
            }
            for (String alias : aliases) {
                PrivateKey key = km.getPrivateKey(alias);
                if (key != null && signs(signature, key, cert)) {
                    return;
                }
            }
        }
        throw new dev.kolo.runtime.KoloConfigurationException("KOLO_TLS_KEY (" + config.get(Settings.TLS_KEY) + ") is not the private key of the certificate in "
                + "KOLO_TLS_CERT (" + config.get(Settings.TLS_CERT) + "): give each worker its own certificate with its own key");
    }

    private static boolean signs(String algorithm, PrivateKey key, X509Certificate cert) {
        try {
            byte[] probe = new byte[32];
            new SecureRandom().nextBytes(probe);
            Signature s = Signature.getInstance(algorithm);
            s.initSign(key);
            s.update(probe);
            byte[] signed = s.sign();
            s.initVerify(cert.getPublicKey());
            s.update(probe);
            return s.verify(signed);
        } catch (GeneralSecurityException e) {
            return false;
        }
    }

    /**
     * Peers would refuse this worker's certificate if it did not chain to the CA they trust (the same bundle):
     * say so at start-up, with the reason (not signed by it, expired, not for TLS clients or servers).
     */
    private static void checkChainsToCa(KoloConfig config, TrustManagerFactory tmf, X509Certificate[] chain) {
        for (TrustManager m : tmf.getTrustManagers()) {
            if (m instanceof X509TrustManager tm) {
                try {
                    // Every worker is a TLS server (it accepts) and a client (it connects): both uses must pass.
                    tm.checkClientTrusted(chain, "UNKNOWN");
                    tm.checkServerTrusted(chain, "UNKNOWN");
                    return;
                } catch (CertificateException e) {
                    throw new dev.kolo.runtime.KoloConfigurationException("KOLO_TLS_CERT (" + config.get(Settings.TLS_CERT) + ") is not accepted by KOLO_TLS_CA ("
                            + config.get(Settings.TLS_CA) + "): " + e.getMessage() + "; sign each worker's certificate with the job's "
                            + "CA, valid now, without an extended key usage or with both serverAuth and clientAuth", e);
                }
            }
        }
        throw new dev.kolo.runtime.KoloConfigurationException("KOLO_TLS_CA (" + config.get(Settings.TLS_CA) + ") gives no X.509 trust manager");
    }
}
