package dev.kolo.runtime;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * Immutable settings of one worker: the value of each {@link Setting} of {@link Settings}, read through its
 * declaration with {@link #get(Setting)} (the other modules' settings are theirs to read). A setting that was not
 * given takes the default its declaration states, derived from the others where it says so ({@code KOLO_MIN_NP}
 * from {@code KOLO_NP}, {@code KOLO_HOST} from the discovery). Build with {@link #builder()}, or read the
 * {@code KOLO_*} environment variables and {@code -Dkolo.*} system properties with {@link #fromEnvironment()} (a
 * property wins over the variable of the same name: {@code KOLO_MIN_NP} is {@code -Dkolo.min.np}).
 */
public final class KoloConfig implements Setting.Values {
    /** The value committed in the Kubernetes manifests, refused so that no job runs with a published secret. */
    static final String MANIFEST_PLACEHOLDER = "replace-me-with-a-random-value";

    /** The settings given, checked; only these count as {@link #isSet set}. */
    private final Map<Setting<?>, Object> given;
    /**
     * Every registered setting's value, given or default, resolved once when the configuration is built: a
     * derived default such as this machine's address is looked up once, and fails the build rather than a use.
     */
    private final Map<Setting<?>, Object> values;

    private KoloConfig(Builder b) {
        this.given = Map.copyOf(b.given);
        Map<Setting<?>, Object> all = new HashMap<>();
        for (Setting<?> s : Settings.all()) {
            all.put(s, b.get(s));
        }
        this.values = Collections.unmodifiableMap(all);
    }

    /**
     * @return the value of {@code setting}: the one given (environment, property, flag or builder), else the
     *         default of its declaration; null for a setting whose absence means "none" (e.g.
     *         {@code KOLO_TIMELINE})
     */
    @Override
    @SuppressWarnings("unchecked")
    public <T> T get(Setting<T> setting) {
        // A setting outside the registry (declared by a test, say) is resolved here, as the builder would.
        return values.containsKey(setting) ? (T) values.get(setting) : valueIn(given, setting, this);
    }

    /** The value given for {@code setting}, else its default in {@code context}. */
    @SuppressWarnings("unchecked")
    private static <T> T valueIn(Map<Setting<?>, Object> given, Setting<T> setting, Setting.Values context) {
        Object v = given.get(setting);
        return v != null ? (T) v : setting.defaultIn(context);
    }

    /** @return a builder with every setting at its default */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a builder holding this configuration's settings, to change a few */
    public Builder toBuilder() {
        Builder b = new Builder();
        // Unset settings stay unset, so a new np moves the derived bounds with it.
        b.given.putAll(given);
        return b;
    }

    /**
     * Reads every {@code KOLO_*} setting from system properties and the environment.
     *
     * @throws IllegalArgumentException naming the setting whose value is invalid
     */
    public static KoloConfig fromEnvironment() {
        return fromSource(Setting.SettingSource.system());
    }

    /**
     * Reads every {@code KOLO_*} setting like {@link #fromEnvironment()} into a builder whose combination is not
     * checked yet, so that settings applied on top (command-line flags) can complete it: a TLS certificate given
     * as a flag with its CA in the environment, {@code --insecure} beside {@code KOLO_DISCOVERY=members}.
     *
     * @throws IllegalArgumentException naming the setting whose value cannot be parsed
     */
    public static Builder builderFromEnvironment() {
        return builderFromSource(Setting.SettingSource.system());
    }

    static KoloConfig fromSource(Setting.SettingSource s) {
        return builderFromSource(s).build();
    }

    static Builder builderFromSource(Setting.SettingSource s) {
        Builder b = builder();
        for (Setting<?> setting : Settings.all()) {
            // The other modules' settings (those on the class path) are checked here too, so that a bad one stops
            // a worker before it joins.
            read(s, setting, b);
        }
        // The secret may also come from KOLO_JOB_SECRET_FILE; a -D secret is warned about (visible in ps).
        JobSecrets.read(s).ifPresent(v -> b.given.put(Settings.JOB_SECRET, v));
        if (!b.given.containsKey(Settings.RANK_HINT) && b.get(Settings.DISCOVERY) == Discovery.KUBERNETES) {
            // A StatefulSet pod is named <set>-<ordinal>: the ordinal is a stable rank hint.
            String hostname = s.raw("HOSTNAME");
            int ordinal = hostname == null ? -1 : podOrdinal(hostname.strip());
            if (ordinal >= 0 && ordinal < Settings.MAX_WORKERS) {
                b.given.put(Settings.RANK_HINT, ordinal);
            }
        }
        return b;
    }

    private static <T> void read(Setting.SettingSource s, Setting<T> setting, Builder b) {
        setting.read(s).ifPresent(v -> b.given.put(setting, v));
    }

    static int podOrdinal(String hostname) {
        int dash = hostname.lastIndexOf('-');
        if (dash < 0 || dash == hostname.length() - 1) {
            return -1;
        }
        try {
            return Integer.parseInt(hostname.substring(dash + 1));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * @return true when the setting was given (environment, property, flag or builder), false when it is at its
     *         default
     */
    public boolean isSet(Setting<?> setting) {
        return given.containsKey(setting);
    }

    /** @return true when a minimum below the maximum makes the job elastic */
    public boolean elastic() {
        return get(Settings.MIN_NP) < get(Settings.MAX_NP);
    }

    /**
     * @return true when {@code KOLO_TLS_CERT}, {@code KOLO_TLS_KEY} and {@code KOLO_TLS_CA} are set (the builder
     *         takes the three or none): the event bus and the data plane then run mutual TLS 1.3, peers identified
     *         by the job's CA
     */
    public boolean tls() {
        return given.containsKey(Settings.TLS_CERT);
    }

    @Override
    public String toString() {
        // Never the secret itself: configurations end up in logs.
        Integer rankHint = get(Settings.RANK_HINT);
        return "KoloConfig{job=" + get(Settings.JOB) + ", np=" + get(Settings.NP) + ", minNp="
                + get(Settings.MIN_NP) + ", maxNp=" + get(Settings.MAX_NP) + ", discovery=" + get(Settings.DISCOVERY)
                + ", host=" + get(Settings.HOST) + ", clusterPort=" + get(Settings.CLUSTER_PORT) + ", dataPort="
                + get(Settings.DATA_PORT) + ", rankHint="
                + (rankHint == null ? OptionalInt.empty() : OptionalInt.of(rankHint)) + ", jobSecret="
                + (isSet(Settings.JOB_SECRET) ? "set" : "none") + (get(Settings.INSECURE) ? ", insecure" : "")
                + (tls() ? ", tls" : "") + "}";
    }

    /**
     * Collects settings. Each value is checked as it is set (one line naming the setting, the value and what is
     * accepted); {@link #build()} checks how they combine.
     */
    public static final class Builder implements Setting.Values {
        private final Map<Setting<?>, Object> given = new HashMap<>();

        private Builder() {
        }

        /**
         * Sets any setting of {@link Settings} that {@link KoloConfig} holds; null unsets it. The setters named
         * below are the contract's (API.md) and views of this one.
         *
         * @throws IllegalArgumentException if the value is not accepted
         */
        public <T> Builder set(Setting<T> setting, T value) {
            if (value == null) {
                given.remove(setting);
            } else {
                given.put(setting, setting.check(value));
            }
            return this;
        }

        /** @return the value set for {@code setting} so far, else its default given the others set so far */
        @Override
        public <T> T get(Setting<T> setting) {
            return valueIn(given, setting, this);
        }

        /** Job name ({@code KOLO_JOB}); also the cluster name. */
        public Builder jobName(String v) { return set(Settings.JOB, v); }
        /** Number of workers ({@code KOLO_NP}). */
        public Builder np(int v) { return set(Settings.NP, v); }
        /** Fewest workers of an elastic job ({@code KOLO_MIN_NP}); 0 for the default ({@code np}). */
        public Builder minNp(int v) { return set(Settings.MIN_NP, v == 0 ? null : v); }
        /** Most workers of an elastic job ({@code KOLO_MAX_NP}); 0 for the default ({@code np}). */
        public Builder maxNp(int v) { return set(Settings.MAX_NP, v == 0 ? null : v); }
        /** Discovery mode ({@code KOLO_DISCOVERY}). */
        public Builder discovery(Discovery v) { return set(Settings.DISCOVERY, Objects.requireNonNull(v)); }
        /** Member addresses for MEMBERS discovery ({@code KOLO_MEMBERS}, comma-separated). */
        public Builder members(List<String> v) { return set(Settings.MEMBERS, v.isEmpty() ? null : List.copyOf(v)); }
        /** Address to bind and advertise ({@code KOLO_HOST}). */
        public Builder host(String v) { return set(Settings.HOST, v); }
        /** Data-plane port, 0 for any free one ({@code KOLO_DATA_PORT}). */
        public Builder dataPort(int v) { return set(Settings.DATA_PORT, v); }
        /** Metrics port, 0 disables ({@code KOLO_METRICS_PORT}). */
        public Builder metricsPort(int v) { return set(Settings.METRICS_PORT, v); }
        /** Rendezvous deadline ({@code KOLO_RENDEZVOUS_TIMEOUT}, seconds). */
        public Builder rendezvousTimeout(Duration v) { return set(Settings.RENDEZVOUS_TIMEOUT, v); }

        /**
         * @return the validated configuration
         * @throws IllegalArgumentException naming the first invalid setting and how to fix it
         */
        public KoloConfig build() {
            int np = get(Settings.NP);
            int min = get(Settings.MIN_NP);
            int max = get(Settings.MAX_NP);
            require(min <= np, "KOLO_MIN_NP (" + min + ") must not exceed KOLO_NP (" + np + ")");
            require(np <= max, "KOLO_NP (" + np + ") must not exceed KOLO_MAX_NP (" + max + ")");
            Discovery discovery = get(Settings.DISCOVERY);
            if (discovery == Discovery.MEMBERS) {
                require(given.containsKey(Settings.MEMBERS), "discovery 'members' needs KOLO_MEMBERS (--members): a "
                        + "comma-separated list of host[:port] cluster addresses");
            }
            String secret = get(Settings.JOB_SECRET);
            if (secret != null) {
                require(!secret.strip().equals(MANIFEST_PLACEHOLDER), "KOLO_JOB_SECRET is still the placeholder of "
                        + "k8s-manifests/secret/job-secret.env.example: make a random one in secret/job-secret.env "
                        + "before deploying (see docs/kubernetes.md, Deploy)");
            }
            checkTls();
            if (discovery == Discovery.KUBERNETES) {
                require(given.containsKey(Settings.SERVICE_DNS), "discovery 'kubernetes' needs KOLO_SERVICE_DNS: "
                        + "the headless Service's DNS name, e.g. kolo-workers.default.svc.cluster.local");
            }
            return new KoloConfig(this);
        }

        /** All three TLS settings or none: a half-configured worker would silently talk plaintext. */
        private void checkTls() {
            List<String> missing = new ArrayList<>();
            for (Setting<String> s : List.of(Settings.TLS_CERT, Settings.TLS_KEY, Settings.TLS_CA)) {
                if (!given.containsKey(s)) {
                    missing.add(s.name());
                }
            }
            require(missing.isEmpty() || missing.size() == 3, "TLS needs KOLO_TLS_CERT, KOLO_TLS_KEY and KOLO_TLS_CA "
                    + "together, but " + String.join(" and ", missing) + (missing.size() == 1 ? " is" : " are")
                    + " not set: set " + (missing.size() == 1 ? "it" : "them") + " (PEM files: this worker's "
                    + "certificate chain, its PKCS#8 private key, the job's CA bundle), or unset the others to run "
                    + "without TLS");
        }

        private static void require(boolean ok, String message) {
            if (!ok) {
                throw new IllegalArgumentException(message);
            }
        }
    }
}
