package dev.kolo.runtime.internal.transport.connect;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Mutual challenge-response of a data connection, keyed by the job's data-plane key. The connector's hello
 * carries a fresh nonce; the acceptor answers with its own fresh nonce and proves the key, then the
 * connector proves it. A proof is HMAC-SHA256 over a role label, the exact hello bytes (job, generation,
 * kind, both ranks, size, connector nonce) and the acceptor nonce: nothing secret crosses the wire, a proof
 * is worthless on any other connection (fresh nonces), and one side's proof never serves as the other's
 * (different labels).
 */
public final class HandshakeAuth {
    static final int NONCE_BYTES = 32;
    static final int PROOF_BYTES = 32;
    private static final String ALGORITHM = "HmacSHA256";
    private static final byte[] ACCEPTOR = "kolo data-plane v1 acceptor\0".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CONNECTOR = "kolo data-plane v1 connector\0".getBytes(StandardCharsets.US_ASCII);

    private final SecretKeySpec key;
    private final SecureRandom random = new SecureRandom();

    HandshakeAuth(byte[] key) {
        this.key = new SecretKeySpec(key, ALGORITHM);
    }

    /** @return a fresh random nonce */
    byte[] nonce() {
        byte[] n = new byte[NONCE_BYTES];
        random.nextBytes(n);
        return n;
    }

    /** @return a new MAC under this key; not thread-safe, so each thread (or handshake) keeps its own */
    Mac mac() {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(key);
            return mac;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("this JVM lacks " + ALGORITHM + ", which every Java SE has", e);
        }
    }

    /** The acceptor's proof; {@code hello} parts concatenated are the hello exactly as sent. */
    static byte[] acceptorProof(Mac mac, byte[] acceptorNonce, byte[]... hello) {
        return proof(mac, ACCEPTOR, acceptorNonce, hello);
    }

    /** The connector's proof over the same transcript. */
    static byte[] connectorProof(Mac mac, byte[] acceptorNonce, byte[]... hello) {
        return proof(mac, CONNECTOR, acceptorNonce, hello);
    }

    /** Constant-time comparison, so timing reveals nothing about how much of a forged proof was right. */
    static boolean same(byte[] expected, byte[] received) {
        return MessageDigest.isEqual(expected, received);
    }

    private static byte[] proof(Mac mac, byte[] label, byte[] acceptorNonce, byte[]... hello) {
        mac.reset();
        mac.update(label);
        for (byte[] part : hello) {
            mac.update(part);
        }
        mac.update(acceptorNonce);
        return mac.doFinal();
    }
}
