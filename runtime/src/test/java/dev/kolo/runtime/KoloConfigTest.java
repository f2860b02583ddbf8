package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KoloConfigTest {

    private static KoloConfig from(Map<String, String> env) {
        return KoloConfig.fromSource(env::get);
    }

    private static String error(Map<String, String> env) {
        return assertThrows(IllegalArgumentException.class, () -> from(env)).getMessage();
    }

    @Test
    void defaultsAreALocalSingleWorker() {
        KoloConfig c = from(Map.of());
        assertEquals(1, c.get(Settings.NP));
        assertEquals(Discovery.LOCAL, c.get(Settings.DISCOVERY));
        assertEquals("127.0.0.1", c.get(Settings.HOST));
        assertFalse(c.elastic());
        assertEquals(null, c.get(Settings.RANK_HINT));
    }

    @Test
    void environmentIsRead() {
        KoloConfig c = from(Map.of("KOLO_JOB", "train-1", "KOLO_NP", "4", "KOLO_MIN_NP", "2", "KOLO_MAX_NP", "6",
                "KOLO_RENDEZVOUS_TIMEOUT", "2.5", "KOLO_DATA_PORT", "7070", "KOLO_RANK_HINT", "3"));
        assertEquals("train-1", c.get(Settings.JOB));
        assertEquals(4, c.get(Settings.NP));
        assertEquals(2, c.get(Settings.MIN_NP));
        assertEquals(6, c.get(Settings.MAX_NP));
        assertTrue(c.elastic());
        assertEquals(Duration.ofMillis(2500), c.get(Settings.RENDEZVOUS_TIMEOUT));
        assertEquals(7070, c.get(Settings.DATA_PORT));
        assertEquals(3, c.get(Settings.RANK_HINT));
    }

    @Test
    void podOrdinalIsTheRankHintOnKubernetes() {
        KoloConfig c = from(Map.of("KOLO_DISCOVERY", "kubernetes", "KOLO_SERVICE_DNS", "w.default.svc",
                "HOSTNAME", "kolo-worker-7", "KOLO_HOST", "10.0.0.7"));
        assertEquals(7, c.get(Settings.RANK_HINT));
    }

    @Test
    void badValuesNameTheSettingAndTheFix() {
        assertEquals("KOLO_NP must be a whole number from 1 to 4096 (got '0')", error(Map.of("KOLO_NP", "0")));
        assertEquals("KOLO_NP must be a whole number from 1 to 4096 (got 'four')", error(Map.of("KOLO_NP", "four")));
        assertEquals("KOLO_DISCOVERY must be one of local, members, kubernetes (got 'dns')",
                error(Map.of("KOLO_DISCOVERY", "dns")));
        assertTrue(error(Map.of("KOLO_DISCOVERY", "members")).contains("needs KOLO_MEMBERS"));
        assertTrue(error(Map.of("KOLO_DISCOVERY", "members", "KOLO_MEMBERS", "a:99999"))
                .contains("host or host:port (port 1-65535) (got 'a:99999')"));
        assertEquals("KOLO_DATA_PORT must be a port from 0 to 65535 (got '70000')",
                error(Map.of("KOLO_DATA_PORT", "70000")));
        assertTrue(error(Map.of("KOLO_NP", "2", "KOLO_MIN_NP", "3")).contains("must not exceed KOLO_NP"));
        assertTrue(error(Map.of("KOLO_JOB", "bad name")).contains("KOLO_JOB must be"));
        assertTrue(error(Map.of("KOLO_DISCOVERY", "kubernetes")).contains("KOLO_SERVICE_DNS"));
    }

    @Test
    void secretAndInsecureAreReadAndTheSecretIsNeverShown() {
        String secret = "s3cret-s3cret-s3cret";
        KoloConfig c = from(Map.of("KOLO_JOB_SECRET", " " + secret + "\n", "KOLO_INSECURE", "TRUE"));
        assertTrue(c.isSet(Settings.JOB_SECRET));
        assertEquals(secret, c.get(Settings.JOB_SECRET), "trimmed like every setting");
        assertTrue(c.get(Settings.INSECURE));
        assertFalse(c.toString().contains(secret), c.toString());
        assertTrue(c.toBuilder().build().isSet(Settings.JOB_SECRET));
        KoloConfig none = from(Map.of("KOLO_JOB_SECRET", " "));
        assertFalse(none.isSet(Settings.JOB_SECRET));
        assertFalse(none.get(Settings.INSECURE));
        assertTrue(error(Map.of("KOLO_INSECURE", "maybe")).contains("KOLO_INSECURE must be true or false"));
        String shortOne = error(Map.of("KOLO_JOB_SECRET", "hunter2"));
        assertTrue(shortOne.contains("KOLO_JOB_SECRET must be at least 16 random characters")
                && shortOne.contains("(got a value of 7 characters)") && !shortOne.contains("hunter2"), shortOne);
        String shortBuilt = assertThrows(IllegalArgumentException.class,
                () -> KoloConfig.builder().set(Settings.JOB_SECRET, "hunter2")).getMessage();
        assertTrue(shortBuilt.contains("(got a secret)") && !shortBuilt.contains("hunter2"), shortBuilt);
        String placeholder = error(Map.of("KOLO_JOB_SECRET", KoloConfig.MANIFEST_PLACEHOLDER));
        assertTrue(placeholder.contains("placeholder") && placeholder.contains("docs/kubernetes.md"), placeholder);
    }

    @Test
    void theSecretMayComeFromAFileAndTheVariableWins(@TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("secret");
        Files.writeString(file, "file-s3cret-file-s3cret\r\nsecond line\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-------"));
        assertEquals("file-s3cret-file-s3cret", from(Map.of("KOLO_JOB_SECRET_FILE", file.toString())).get(Settings.JOB_SECRET));
        assertEquals("var-s3cret-var-s3cret", from(Map.of("KOLO_JOB_SECRET_FILE", file.toString(),
                "KOLO_JOB_SECRET", "var-s3cret-var-s3cret")).get(Settings.JOB_SECRET));
        Files.writeString(file, "hunter2\n");
        String shortOne = error(Map.of("KOLO_JOB_SECRET_FILE", file.toString()));
        assertTrue(shortOne.contains("KOLO_JOB_SECRET_FILE: the first line of " + file + " must be the job secret, "
                + "at least 16 characters (it has 7)") && !shortOne.contains("hunter2"), shortOne);
        String missing = error(Map.of("KOLO_JOB_SECRET_FILE", tmp.resolve("none").toString()));
        assertTrue(missing.contains("KOLO_JOB_SECRET_FILE: cannot read " + tmp.resolve("none")), missing);
    }

    /** As ssh refuses a private key others can read: the error names the mode and the fix, never the secret. */
    @Test
    void aSecretFileOtherUsersMayReadOrWriteIsRefused(@TempDir Path tmp) throws Exception {
        Path file = tmp.resolve("secret");
        Files.writeString(file, "file-s3cret-file-s3cret\n");
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        String readable = error(Map.of("KOLO_JOB_SECRET_FILE", file.toString()));
        assertTrue(readable.contains("KOLO_JOB_SECRET_FILE: " + file + " has mode 0644, so every user of this machine "
                + "may read the job secret in it") && readable.contains("chmod 600 " + file)
                && !readable.contains("file-s3cret"), readable);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-rw--w-"));
        assertTrue(error(Map.of("KOLO_JOB_SECRET_FILE", file.toString())).contains("has mode 0662"));
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("r--r-----")); // group: Kubernetes' fsGroup
        assertEquals("file-s3cret-file-s3cret", from(Map.of("KOLO_JOB_SECRET_FILE", file.toString())).get(Settings.JOB_SECRET));
    }

    @Test
    void outsideLocalDiscoveryAWorkerWithoutSecretRefusesToStart() {
        KoloConfig members = from(Map.of("KOLO_DISCOVERY", "members", "KOLO_MEMBERS", "10.0.0.1,10.0.0.2",
                "KOLO_HOST", "127.0.0.1"));
        KoloException e = assertThrows(KoloException.class, () -> Kolo.checkSecurity(members));
        assertTrue(e.getMessage().contains("KOLO_JOB_SECRET") && e.getMessage().contains("KOLO_INSECURE=true")
                && e.getMessage().contains("Secret"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
        Kolo.checkSecurity(members.toBuilder().set(Settings.INSECURE, true).build());
        Kolo.checkSecurity(members.toBuilder().set(Settings.JOB_SECRET, "0123456789abcdef").build());
        Kolo.checkSecurity(from(Map.of())); // LOCAL: unchanged
        // Kolo.init refuses before it binds or joins anything.
        KoloException init = assertThrows(KoloException.class, () -> Kolo.init(members));
        assertEquals(e.getMessage(), init.getMessage());
    }

    @Test
    void propertyNamesFollowTheVariablesAndWin() {
        assertEquals("kolo.min.np", Settings.MIN_NP.property());
        assertEquals(List.of("a:1", "b"), from(Map.of("KOLO_DISCOVERY", "members", "KOLO_MEMBERS", " a:1, ,b ",
                "KOLO_INSECURE", "true")).get(Settings.MEMBERS));
        KoloConfig c = from(Map.of("KOLO_NP", "2", "kolo.np", "3"));
        assertEquals(3, c.get(Settings.NP));
        assertEquals("-Dkolo.np must be a whole number from 1 to 4096 (got 'x')",
                error(Map.of("KOLO_NP", "2", "kolo.np", "x")));
    }
}
