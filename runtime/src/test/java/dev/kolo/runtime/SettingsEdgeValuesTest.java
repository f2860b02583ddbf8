package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.core.Hazelcast;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Edge values of every family of settings, through the environment, system properties and the builder (the
 * worker's flags are checked in the samples' CLI test): each refused with one line naming the setting, the value
 * given and what is accepted, before anything is joined or bound.
 */
class SettingsEdgeValuesTest {
    /** Values no number setting accepts. */
    private static final List<String> NEVER = List.of("-1", "NaN", "Infinity", "-Infinity", "1e99", "99999999999",
            "garbage", "0x10", "1 2");

    /** Each number setting with the smallest value above its range (and whether 0 is in range). */
    private record Family(Setting<?> setting, String aboveMax, boolean zeroAllowed) {
    }

    private static final List<Family> NUMBERS = List.of(
            new Family(Settings.NP, "4097", false),
            new Family(Settings.MIN_NP, "4097", false),
            new Family(Settings.MAX_NP, "4097", false),
            new Family(Settings.RANK_HINT, "4096", true),
            new Family(Settings.CLUSTER_PORT, "65536", false),
            new Family(Settings.DATA_PORT, "65536", true),
            new Family(Settings.METRICS_PORT, "65536", true),
            new Family(Settings.RENDEZVOUS_TIMEOUT, "2592001", false),
            new Family(Settings.HEARTBEAT_TIMEOUT, "2592001", false),
            new Family(Settings.OP_TIMEOUT, "2592001", false),
            new Family(Settings.STALL_WARNING, "2592001", false),
            new Family(Settings.STALL_SHUTDOWN, "2592001", true),
            new Family(Settings.ELASTIC_TIMEOUT, "2592001", false),
            new Family(Settings.CYCLE_TIME, "1001", true),
            new Family(Settings.POLL_TIME, "1001", true),
            new Family(Settings.FUSION_THRESHOLD, "2147483648", true),
            new Family(Settings.CACHE_CAPACITY, "16777217", true),
            new Family(Settings.RECURSIVE_DOUBLING_MAX_BYTES, "16777217", true),
            new Family(Settings.RABENSEIFNER_MAX_BYTES, "2147483648", true));

    private static String refusedFromEnvironment(String name, String value) {
        return assertThrows(IllegalArgumentException.class,
                () -> KoloConfig.fromSource(Map.of(name, value)::get), name + "=" + value).getMessage();
    }

    private static void assertOneLine(String message, String origin, String value) {
        assertTrue(message.startsWith(origin + " must be "), message);
        assertTrue(message.endsWith("(got '" + value + "')"), message);
        assertFalse(message.contains("\n"), message);
    }

    @Test
    void everyNumberSettingRefusesEdgeValuesFromTheEnvironmentAndProperties() {
        for (Family f : NUMBERS) {
            String name = f.setting.name();
            List<String> refused = new java.util.ArrayList<>(NEVER);
            refused.add(f.aboveMax);
            if (!f.zeroAllowed) {
                refused.add("0");
            }
            for (String v : refused) {
                assertOneLine(refusedFromEnvironment(name, v), name, v);
                String property = f.setting.property();
                assertOneLine(refusedFromEnvironment(property, v), "-D" + property, v);
            }
            if (f.zeroAllowed && f.setting != Settings.RANK_HINT) {
                KoloConfig.fromSource(Map.of(name, "0")::get); // documented as off, any or never
            }
        }
    }

    @Test
    void everyChoiceAndFlagSettingRefusesGarbage() {
        for (Setting<?> s : List.of(Settings.DISCOVERY, Settings.INSECURE, Settings.KERNELS, Settings.KERNELS_ISA,
                Settings.JOB, Settings.MEMBERS)) {
            for (String v : List.of("garbage!", "NaN!", "-1!")) {
                assertOneLine(refusedFromEnvironment(s.name(), v), s.name(), v);
            }
        }
        assertEquals("KOLO_KERNELS must be one of auto, native, java (got 'foo')",
                refusedFromEnvironment("KOLO_KERNELS", "foo"));
    }

    @Test
    void theBuilderRefusesTypedEdgeValuesNamingTheSettingAndValue() {
        KoloConfig.Builder b = KoloConfig.builder();
        Map<String, Consumer<KoloConfig.Builder>> cases = new HashMap<>();
        cases.put("KOLO_NP (--np) must be a whole number from 1 to 4096 (got 0)", x -> x.np(0));
        cases.put("KOLO_NP (--np) must be a whole number from 1 to 4096 (got 4097)", x -> x.np(4097));
        cases.put("KOLO_MIN_NP (--min-np) must be a whole number from 1 to 4096 (got -1)", x -> x.minNp(-1));
        cases.put("KOLO_RANK_HINT (--rank-hint) must be a whole number from 0 to 4095 (got -2)", x -> x.set(Settings.RANK_HINT, -2));
        cases.put("KOLO_DATA_PORT (--data-port) must be a port from 0 to 65535 (got 65536)", x -> x.dataPort(65536));
        cases.put("KOLO_CLUSTER_PORT (--cluster-port) must be a port from 1 to 65535 (got 0)", x -> x.set(Settings.CLUSTER_PORT, 0));
        cases.put("KOLO_RENDEZVOUS_TIMEOUT (--rendezvous-timeout) must be a number of seconds from 0.001 to 2592000 "
                + "(30 days) (got 0.0 s)", x -> x.rendezvousTimeout(Duration.ZERO));
        cases.put("KOLO_OP_TIMEOUT (--op-timeout) must be a number of seconds from 0.001 to 2592000 (30 days) "
                + "(got -1.0 s)", x -> x.set(Settings.OP_TIMEOUT, Duration.ofSeconds(-1)));
        cases.put("KOLO_ELASTIC_TIMEOUT (--elastic-timeout) must be a number of seconds from 0.001 to 2592000 "
                + "(30 days) (got 3.1536E10 s)", x -> x.set(Settings.ELASTIC_TIMEOUT, Duration.ofDays(365L * 1000)));
        cases.put("KOLO_CYCLE_TIME (--cycle-time) must be a number of milliseconds from 0 to 1000 (got 5000.0 ms)",
                x -> x.set(Settings.CYCLE_TIME, Duration.ofSeconds(5)));
        cases.put("KOLO_FUSION_THRESHOLD (--fusion-threshold) must be a whole number of bytes from 0 to 2147483647 "
                + "(got -1)", x -> x.set(Settings.FUSION_THRESHOLD, -1L));
        cases.put("KOLO_CACHE_CAPACITY (--cache-capacity) must be a whole number from 0 (off) to 16777216 "
                + "(got 16777217)", x -> x.set(Settings.CACHE_CAPACITY, 16777217));
        cases.put("KOLO_JOB (--job) must be 1-63 letters, digits, '.', '_' or '-', starting with a letter or digit "
                + "(got bad name)", x -> x.jobName("bad name"));
        cases.put("KOLO_KERNELS (--kernels) must be one of auto, native, java (got gpu)", x -> x.set(Settings.KERNELS, "gpu"));
        cases.forEach((expected, setter) -> assertEquals(expected,
                assertThrows(IllegalArgumentException.class, () -> setter.accept(b)).getMessage()));
    }

    @Test
    @Timeout(60)
    void aBadSettingStopsInitBeforeAnythingIsJoined() {
        String key = Settings.CYCLE_TIME.property();
        System.setProperty(key, "NaN");
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, Kolo::init);
            assertEquals("-Dkolo.cycle.time must be a number of milliseconds from 0 to 1000 (got 'NaN')",
                    e.getMessage());
        } finally {
            System.clearProperty(key);
        }
        assertTrue(Hazelcast.getAllHazelcastInstances().isEmpty(), "no cluster member was started");
        assertTrue(Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.getName().startsWith("vert.x-")),
                "no Vert.x instance was started");
    }
}
