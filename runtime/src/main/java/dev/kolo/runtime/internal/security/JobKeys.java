package dev.kolo.runtime.internal.security;

import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Settings;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Keys of one job, derived from its shared secret ({@code KOLO_JOB_SECRET}) and its name with HKDF-SHA256
 * (RFC 5869): one key per purpose, so a key learned from one plane says nothing about another, and the same
 * secret reused for two jobs gives unrelated keys. The secret itself is used nowhere else.
 */
public final class JobKeys {
    static final String MAC_ALGORITHM = "HmacSHA256";
    private static final byte[] SALT = "kolo job secret v1".getBytes(StandardCharsets.US_ASCII);

    private final byte[] dataPlane;
    private final byte[] controlPlane;
    private final String clusterName;

    private JobKeys(byte[] prk, String job) {
        this.dataPlane = expand(prk, "data-plane", job);
        this.controlPlane = expand(prk, "control-plane", job);
        // 64 bits of a PRF of the secret: workers with another secret (or none) form another cluster.
        byte[] tag = expand(prk, "cluster-name", job);
        this.clusterName = job + "-" + HexFormat.of().formatHex(tag, 0, 8);
        Arrays.fill(tag, (byte) 0);
    }

    /** @return the job's keys, or null when it has no secret */
    public static JobKeys of(KoloConfig config) {
        String secret = config.get(Settings.JOB_SECRET);
        if (secret == null) {
            return null;
        }
        byte[] ikm = secret.getBytes(StandardCharsets.UTF_8);
        byte[] prk = hkdfExtract(SALT, ikm);
        Arrays.fill(ikm, (byte) 0);
        try {
            return new JobKeys(prk, config.get(Settings.JOB));
        } finally {
            Arrays.fill(prk, (byte) 0);
        }
    }

    /** @return the key of data-plane handshakes (a copy) */
    public byte[] dataPlane() {
        return dataPlane.clone();
    }

    /** @return the key of control-message tags (a copy) */
    public byte[] controlPlane() {
        return controlPlane.clone();
    }

    /**
     * @return the Hazelcast cluster name: the job name plus a tag derived from the secret, so that a worker
     *         with a wrong secret, or a stranger who does not watch the network, never joins the job's cluster
     */
    public String clusterName() {
        return clusterName;
    }

    /** The key of one purpose: the first HKDF-Expand block with info = purpose || 0x00 || job. */
    private static byte[] expand(byte[] prk, String purpose, String job) {
        byte[] p = purpose.getBytes(StandardCharsets.US_ASCII);
        byte[] j = job.getBytes(StandardCharsets.UTF_8);
        byte[] info = new byte[p.length + 1 + j.length];
        System.arraycopy(p, 0, info, 0, p.length);
        System.arraycopy(j, 0, info, p.length + 1, j.length);
        return hkdfExpandFirstBlock(prk, info);
    }

    /** HKDF-Extract (RFC 5869 2.2): PRK = HMAC-SHA256(salt, ikm). */
    static byte[] hkdfExtract(byte[] salt, byte[] ikm) {
        return hmac(salt, ikm);
    }

    /** HKDF-Expand (RFC 5869 2.3) for its first 32-byte block: T(1) = HMAC-SHA256(prk, info || 0x01). */
    static byte[] hkdfExpandFirstBlock(byte[] prk, byte[] info) {
        byte[] input = Arrays.copyOf(info, info.length + 1);
        input[info.length] = 1;
        return hmac(prk, input);
    }

    static Mac newMac(byte[] key) {
        try {
            Mac mac = Mac.getInstance(MAC_ALGORITHM);
            mac.init(new SecretKeySpec(key, MAC_ALGORITHM));
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JVM lacks " + MAC_ALGORITHM + ", which every Java SE has", e);
        }
    }

    private static byte[] hmac(byte[] key, byte[] data) {
        return newMac(key).doFinal(data);
    }
}
