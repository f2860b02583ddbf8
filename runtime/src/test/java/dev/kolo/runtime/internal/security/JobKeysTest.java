package dev.kolo.runtime.internal.security;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Settings;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The key derivation against RFC 5869's own test vectors, and what the job's keys depend on. */
class JobKeysTest {
    private static final HexFormat HEX = HexFormat.of();

    @Test
    void hkdfMatchesRfc5869TestCase1() {
        byte[] ikm = HEX.parseHex("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b");
        byte[] salt = HEX.parseHex("000102030405060708090a0b0c");
        byte[] info = HEX.parseHex("f0f1f2f3f4f5f6f7f8f9");
        byte[] prk = JobKeys.hkdfExtract(salt, ikm);
        assertEquals("077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5", HEX.formatHex(prk));
        // OKM (L = 42) starts with T(1), the only block Kolo takes.
        assertEquals("3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf",
                HEX.formatHex(JobKeys.hkdfExpandFirstBlock(prk, info)));
    }

    @Test
    void hkdfMatchesRfc5869TestCase3WithEmptySaltAndInfo() {
        byte[] ikm = HEX.parseHex("0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b");
        // An empty salt is HashLen zero bytes (RFC 5869 2.2); HMAC pads a short key with zeros, so both agree.
        byte[] prk = JobKeys.hkdfExtract(new byte[32], ikm);
        assertEquals("19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04", HEX.formatHex(prk));
        assertEquals("8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d",
                HEX.formatHex(JobKeys.hkdfExpandFirstBlock(prk, new byte[0])));
    }

    @Test
    void keysDependOnSecretJobAndPurpose() {
        JobKeys a = JobKeys.of(KoloConfig.builder().jobName("job-a").set(Settings.JOB_SECRET, "s3cret-s3cret-s3cret").build());
        JobKeys same = JobKeys.of(KoloConfig.builder().jobName("job-a").set(Settings.JOB_SECRET, "s3cret-s3cret-s3cret").build());
        JobKeys otherJob = JobKeys.of(KoloConfig.builder().jobName("job-b").set(Settings.JOB_SECRET, "s3cret-s3cret-s3cret").build());
        JobKeys otherSecret = JobKeys.of(KoloConfig.builder().jobName("job-a").set(Settings.JOB_SECRET, "other-s3cret-value").build());
        assertArrayEquals(a.dataPlane(), same.dataPlane());
        assertNotEquals(HEX.formatHex(a.dataPlane()), HEX.formatHex(a.controlPlane()));
        assertNotEquals(HEX.formatHex(a.dataPlane()), HEX.formatHex(otherJob.dataPlane()));
        assertNotEquals(HEX.formatHex(a.dataPlane()), HEX.formatHex(otherSecret.dataPlane()));
        assertNotEquals(a.clusterName(), otherSecret.clusterName());
    }
}
