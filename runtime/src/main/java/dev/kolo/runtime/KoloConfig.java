package dev.kolo.runtime;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * Immutable settings of one worker: the values of the runtime's {@link Settings}, each read by one typed getter
 * (the other modules' settings are theirs to read). Build with {@link #builder()},
 * or read the {@code KOLO_*} environment variables and {@code -Dkolo.*} system properties with
 * {@link #fromEnvironment()} (a property wins over the variable of the same name: {@code KOLO_MIN_NP} is
 * {@code -Dkolo.min.np}).
 */
public final class KoloConfig {
    /** Default Hazelcast member port; LOCAL discovery probes it and the ports after it, {@value #LOCAL_PORT_COUNT} in all. */
    public static final int DEFAULT_CLUSTER_PORT = 5701;
    /** How many consecutive cluster ports LOCAL discovery uses, so that several local jobs fit on one machine. */
    public static final int LOCAL_PORT_COUNT = 20;
    /** Fewest characters of a {@code KOLO_JOB_SECRET}: proofs on the wire must not allow guessing it offline. */
    public static final int MIN_SECRET_LENGTH = Settings.MIN_SECRET_LENGTH;
    /** The value committed in the Kubernetes manifests, refused so that no job runs with a published secret. */
    static final String MANIFEST_PLACEHOLDER = "replace-me-with-a-random-value";
    /**
     * Default cache size: larger than the tensors of any real step (a large model has a few thousand), so a
     * step never evicts its own tensors; an entry costs a few hundred bytes, and only entries in use cost
     * anything in an agreement round (a bit each).
     */
    public static final int DEFAULT_CACHE_CAPACITY = 65536;
    /** Largest cache: a round message carries two bits per entry. */
    public static final int MAX_CACHE_CAPACITY = Settings.MAX_CACHE_CAPACITY;
    /**
     * Default stall shutdown: long enough for what one rank may legitimately do while the others wait at a
     * collective (evaluate, write a checkpoint), short enough that a rank that never submits a tensor ends the
     * step with an error rather than a hang; PyTorch's default collective timeout is the same 10 minutes.
     */
    public static final Duration DEFAULT_STALL_SHUTDOWN = Duration.ofMinutes(10);

    /** The settings given, checked; a setting that is absent takes its default. */
    private final Map<Setting<?>, Object> given;
    private final int minNp;
    private final int maxNp;
    private final String host;
    /** Read on every blocking collective: looked up once rather than in the map on each call. */
    private final Duration opTimeout;

    private KoloConfig(Builder b) {
        this.given = Map.copyOf(b.given);
        int np = get(Settings.NP);
        this.minNp = b.given.containsKey(Settings.MIN_NP) ? get(Settings.MIN_NP) : np;
        this.maxNp = b.given.containsKey(Settings.MAX_NP) ? get(Settings.MAX_NP) : Math.max(np, minNp);
        this.host = b.given.containsKey(Settings.HOST) ? get(Settings.HOST) : defaultHost(discovery());
        this.opTimeout = get(Settings.OP_TIMEOUT);
    }

    private <T> T get(Setting<T> setting) {
        return valueIn(given, setting);
    }

    /** The value given for {@code setting}, or its default. */
    @SuppressWarnings("unchecked")
    private static <T> T valueIn(Map<Setting<?>, Object> given, Setting<T> setting) {
        Object v = given.get(setting);
        return v != null ? (T) v : setting.defaultValue();
    }

    /** @return a builder with every setting at its default */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a builder holding this configuration's settings, to change a few */
    public Builder toBuilder() {
        Builder b = new Builder();
        // Unset bounds stay unset, so a new np moves the derived bounds with it.
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

    private static String defaultHost(Discovery discovery) {
        if (discovery == Discovery.LOCAL) {
            return "127.0.0.1";
        }
        try {
            return InetAddress.getLocalHost().getHostAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("cannot determine this machine's address (" + e.getMessage()
                    + "); set KOLO_HOST to the address other workers reach this one at");
        }
    }

    /**
     * @return true when the setting was given (environment, property, flag or builder), false when it is at its
     *         default
     */
    public boolean isSet(Setting<?> setting) {
        return given.containsKey(setting);
    }

    /** @return the job name, which is also the cluster name: jobs with different names never mix */
    public String jobName() {
        return get(Settings.JOB);
    }

    /** @return the number of workers the first rendezvous waits for */
    public int np() {
        return get(Settings.NP);
    }

    /** @return the fewest workers the job may run with (equals {@link #np()} unless elastic) */
    public int minNp() {
        return minNp;
    }

    /** @return the most workers the job admits */
    public int maxNp() {
        return maxNp;
    }

    /** @return true when a minimum below the maximum makes the job elastic */
    public boolean elastic() {
        return minNp < maxNp;
    }

    /** @return how workers find each other */
    public Discovery discovery() {
        return get(Settings.DISCOVERY);
    }

    /** @return cluster member addresses for {@link Discovery#MEMBERS} ({@code host} or {@code host:port}) */
    public List<String> members() {
        List<String> m = get(Settings.MEMBERS);
        return m == null ? List.of() : m;
    }

    /** @return the address this worker binds and advertises for the cluster and data plane */
    public String host() {
        return host;
    }

    /** @return the Hazelcast member port (LOCAL discovery moves up to the next free one) */
    public int clusterPort() {
        return get(Settings.CLUSTER_PORT);
    }

    /** @return the data-plane port; 0 picks a free one */
    public int dataPort() {
        return get(Settings.DATA_PORT);
    }

    /** @return the address the metrics port binds: {@code KOLO_METRICS_HOST}, else {@link #host()} */
    public String metricsHost() {
        String v = get(Settings.METRICS_HOST);
        return v == null || v.isBlank() ? host : v;
    }

    /** @return the HTTP metrics and health port; 0 disables the endpoint */
    public int metricsPort() {
        return get(Settings.METRICS_PORT);
    }

    /** @return how long rendezvous may take before it fails with a report of who arrived */
    public Duration rendezvousTimeout() {
        return get(Settings.RENDEZVOUS_TIMEOUT);
    }

    /** @return how long a silent (hung) cluster member is tolerated before it is declared lost */
    public Duration heartbeatTimeout() {
        return get(Settings.HEARTBEAT_TIMEOUT);
    }

    /** @return the longest any single collective or barrier may wait before it fails */
    public Duration opTimeout() {
        return opTimeout;
    }

    /** @return the stable rank this worker asks for (e.g. a pod ordinal), if any */
    public OptionalInt rankHint() {
        Integer hint = get(Settings.RANK_HINT);
        return hint == null ? OptionalInt.empty() : OptionalInt.of(hint);
    }

    /**
     * @return the cluster port {@link Discovery#KUBERNETES} discovery looks for at every address of the Service
     *         ({@code KOLO_SERVICE_PORT}, by default {@link #clusterPort()}): every pod's first worker's, when pods
     *         run several workers on several ports
     */
    public int servicePort() {
        Integer p = get(Settings.SERVICE_PORT);
        return p == null ? clusterPort() : p;
    }

    /** @return the headless Service DNS name used by {@link Discovery#KUBERNETES} */
    public String serviceDns() {
        return get(Settings.SERVICE_DNS);
    }

    /** @return the largest fused allreduce buffer in bytes; 0 disables fusion */
    public long fusionThreshold() {
        return get(Settings.FUSION_THRESHOLD);
    }

    /** @return how long the coordinator batches ready ops while more are half-submitted */
    public Duration cycleTime() {
        return get(Settings.CYCLE_TIME);
    }

    /** @return whether rank 0 tunes the fusion threshold, eager size and cycle time during the first steps */
    public boolean autotune() {
        return get(Settings.AUTOTUNE);
    }

    /** @return where rank 0 writes the autotuner's samples as CSV, or null for nowhere */
    public String autotuneLog() {
        return get(Settings.AUTOTUNE_LOG);
    }

    /**
     * @return how many tensor specs each generation's cache holds (the ranks agree on a cached tensor among
     *         themselves, without the coordinator); 0 disables the cache
     */
    public int cacheCapacity() {
        return get(Settings.CACHE_CAPACITY);
    }

    /** @return the largest allreduce of 3 or more ranks that takes recursive doubling; 0: none */
    public int recursiveDoublingMaxBytes() {
        return get(Settings.RECURSIVE_DOUBLING_MAX_BYTES);
    }

    /** @return the largest allreduce of 3 or more ranks that takes Rabenseifner's algorithm (the ring above); 0: none */
    public long rabenseifnerMaxBytes() {
        return get(Settings.RABENSEIFNER_MAX_BYTES);
    }

    /** @return whether ranks of the same host move their bytes through shared memory ({@code KOLO_SHM}) */
    public boolean sharedMemory() {
        return get(Settings.SHM);
    }

    /** @return each direction's ring between two co-located ranks, in bytes ({@code KOLO_SHM_BYTES}) */
    public int sharedMemoryBytes() {
        return get(Settings.SHM_BYTES);
    }

    /** @return how allreduces span hosts: {@code auto}, {@code leaders} or {@code off} ({@code KOLO_HIERARCHICAL}) */
    public String hierarchical() {
        return get(Settings.HIERARCHICAL);
    }

    /** @return how co-located ranks bind to the host's CPUs: {@code auto} or {@code off} ({@code KOLO_CPU_BIND}) */
    public String cpuBind() {
        return get(Settings.CPU_BIND);
    }

    /** @return after how long a tensor some ranks submitted and others not is logged */
    public Duration stallWarning() {
        return get(Settings.STALL_WARNING);
    }

    /**
     * @return after how long such a tensor fails on every rank, naming the ranks that did not submit it (a rank
     *         that submits it later fails at once); zero never
     */
    public Duration stallShutdown() {
        return get(Settings.STALL_SHUTDOWN);
    }

    /**
     * @return where to write the Chrome-trace timeline, or null when off; with several workers a
     *         {@code {rank}} in the path is replaced by the rank
     */
    public String timeline() {
        return get(Settings.TIMELINE);
    }

    /** @return how long an elastic job waits for enough workers to form a new generation after a change */
    public Duration elasticTimeout() {
        return get(Settings.ELASTIC_TIMEOUT);
    }

    /** @return the reduction kernels asked for: {@code auto}, {@code native} or {@code java} */
    public String kernels() {
        return get(Settings.KERNELS);
    }

    /** @return the highest instruction set the native kernels may use, or null for the best the CPU has */
    public String kernelsIsa() {
        return get(Settings.KERNELS_ISA);
    }

    /**
     * @return true when the job has a shared secret ({@code KOLO_JOB_SECRET}): its control messages and data
     *         connections are authenticated with keys derived from it
     */
    public boolean hasJobSecret() {
        return given.containsKey(Settings.JOB_SECRET);
    }

    /** The shared secret, or null. Never printed (not in {@link #toString()}): only key derivation reads it. */
    public String jobSecret() {
        return get(Settings.JOB_SECRET);
    }

    /**
     * @return true when the worker may run without a secret outside LOCAL discovery ({@code KOLO_INSECURE}),
     *         on a network where everyone who can reach its ports is trusted
     */
    public boolean insecure() {
        return get(Settings.INSECURE);
    }

    /**
     * @return true when {@code KOLO_TLS_CERT}, {@code KOLO_TLS_KEY} and {@code KOLO_TLS_CA} are set: the event
     *         bus and the data plane then run mutual TLS 1.3, peers identified by the job's CA
     */
    public boolean tls() {
        return given.containsKey(Settings.TLS_CERT);
    }

    /** @return path of this worker's PEM certificate chain ({@code KOLO_TLS_CERT}), or null without TLS */
    public String tlsCert() {
        return get(Settings.TLS_CERT);
    }

    /** @return path of this worker's PEM PKCS#8 private key ({@code KOLO_TLS_KEY}), or null without TLS */
    public String tlsKey() {
        return get(Settings.TLS_KEY);
    }

    /** @return path of the PEM CA bundle peers' certificates must chain to ({@code KOLO_TLS_CA}), or null */
    public String tlsCa() {
        return get(Settings.TLS_CA);
    }

    @Override
    public String toString() {
        // Never the secret itself: configurations end up in logs.
        return "KoloConfig{job=" + jobName() + ", np=" + np() + ", minNp=" + minNp + ", maxNp=" + maxNp
                + ", discovery=" + discovery() + ", host=" + host + ", clusterPort=" + clusterPort()
                + ", dataPort=" + dataPort() + ", rankHint=" + rankHint() + ", jobSecret="
                + (hasJobSecret() ? "set" : "none") + (insecure() ? ", insecure" : "") + (tls() ? ", tls" : "") + "}";
    }

    /**
     * Collects settings. Each value is checked as it is set (one line naming the setting, the value and what is
     * accepted); {@link #build()} checks how they combine.
     */
    public static final class Builder {
        private final Map<Setting<?>, Object> given = new HashMap<>();

        private Builder() {
        }

        /**
         * Sets any setting of {@link Settings} that {@link KoloConfig} holds; null unsets it. The typed setters
         * below are one-line views of this one.
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


        private <T> T get(Setting<T> setting) {
            return valueIn(given, setting);
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
        /** Hazelcast member port ({@code KOLO_CLUSTER_PORT}). */
        public Builder clusterPort(int v) { return set(Settings.CLUSTER_PORT, v); }
        /** Data-plane port, 0 for any free one ({@code KOLO_DATA_PORT}). */
        public Builder dataPort(int v) { return set(Settings.DATA_PORT, v); }
        /** Metrics port, 0 disables ({@code KOLO_METRICS_PORT}). */
        public Builder metricsPort(int v) { return set(Settings.METRICS_PORT, v); }
        public Builder metricsHost(String v) { return set(Settings.METRICS_HOST, v); }
        /** Rendezvous deadline ({@code KOLO_RENDEZVOUS_TIMEOUT}, seconds). */
        public Builder rendezvousTimeout(Duration v) { return set(Settings.RENDEZVOUS_TIMEOUT, v); }
        /** Silence after which a member is declared lost ({@code KOLO_HEARTBEAT_TIMEOUT}, seconds). */
        public Builder heartbeatTimeout(Duration v) { return set(Settings.HEARTBEAT_TIMEOUT, v); }
        /** Deadline of any single collective ({@code KOLO_OP_TIMEOUT}, seconds). */
        public Builder opTimeout(Duration v) { return set(Settings.OP_TIMEOUT, v); }
        /** Stable rank to ask for, or -1 for none ({@code KOLO_RANK_HINT}). */
        public Builder rankHint(int v) { return set(Settings.RANK_HINT, v == -1 ? null : v); }
        /** Headless Service DNS name for KUBERNETES discovery ({@code KOLO_SERVICE_DNS}). */
        public Builder serviceDns(String v) { return set(Settings.SERVICE_DNS, v); }
        /** Cluster port kubernetes discovery looks for on the Service's addresses ({@code KOLO_SERVICE_PORT}). */
        public Builder servicePort(int v) { return set(Settings.SERVICE_PORT, v); }
        /** Largest fused allreduce in bytes, 0 disables fusion ({@code KOLO_FUSION_THRESHOLD}). */
        public Builder fusionThreshold(long v) { return set(Settings.FUSION_THRESHOLD, v); }
        /** Batching window of the coordinator ({@code KOLO_CYCLE_TIME}, milliseconds). */
        public Builder cycleTime(Duration v) { return set(Settings.CYCLE_TIME, v); }
        /** Tune fusion threshold, eager size and cycle time during the first steps ({@code KOLO_AUTOTUNE}). */
        public Builder autotune(boolean v) { return set(Settings.AUTOTUNE, v); }
        /** CSV file of the autotuner's samples, on rank 0 ({@code KOLO_AUTOTUNE_LOG}). */
        public Builder autotuneLog(String v) { return set(Settings.AUTOTUNE_LOG, v); }
        /** Tensor specs each generation caches, 0 disables ({@code KOLO_CACHE_CAPACITY}). */
        public Builder cacheCapacity(int v) { return set(Settings.CACHE_CAPACITY, v); }
        /** Largest recursive-doubling allreduce ({@code KOLO_RECURSIVE_DOUBLING_MAX_BYTES}). */
        public Builder recursiveDoublingMaxBytes(int v) { return set(Settings.RECURSIVE_DOUBLING_MAX_BYTES, v); }
        /** Largest Rabenseifner allreduce ({@code KOLO_RABENSEIFNER_MAX_BYTES}). */
        public Builder rabenseifnerMaxBytes(long v) { return set(Settings.RABENSEIFNER_MAX_BYTES, v); }
        /** Shared memory between ranks of the same host ({@code KOLO_SHM}; default on). */
        public Builder sharedMemory(boolean v) { return set(Settings.SHM, v); }
        /** Each direction's shared-memory ring, a power of two ({@code KOLO_SHM_BYTES}). */
        public Builder sharedMemoryBytes(int v) { return set(Settings.SHM_BYTES, v); }
        /** How co-located ranks bind to the host's CPUs: auto or off ({@code KOLO_CPU_BIND}). */
        public Builder cpuBind(String v) { return set(Settings.CPU_BIND, v); }

        /** How allreduces span hosts: auto, leaders or off ({@code KOLO_HIERARCHICAL}). */
        public Builder hierarchical(String v) { return set(Settings.HIERARCHICAL, v); }
        /** Stall warning delay ({@code KOLO_STALL_WARNING}, seconds). */
        public Builder stallWarning(Duration v) { return set(Settings.STALL_WARNING, v); }
        /** Stall shutdown delay, zero never ({@code KOLO_STALL_SHUTDOWN}, seconds; default 600). */
        public Builder stallShutdown(Duration v) { return set(Settings.STALL_SHUTDOWN, v); }
        /** Chrome-trace output path, null for none ({@code KOLO_TIMELINE}). */
        public Builder timeline(String v) { return set(Settings.TIMELINE, v); }
        /** Wait for a new elastic generation ({@code KOLO_ELASTIC_TIMEOUT}, seconds). */
        public Builder elasticTimeout(Duration v) { return set(Settings.ELASTIC_TIMEOUT, v); }
        /** Reduction kernels: {@code auto}, {@code native} or {@code java} ({@code KOLO_KERNELS}). */
        public Builder kernels(String v) { return set(Settings.KERNELS, v); }
        /**
         * Shared secret of the job ({@code KOLO_JOB_SECRET}), the same on every worker, at least
         * {@value KoloConfig#MIN_SECRET_LENGTH} characters; null for none. Authenticates control messages and
         * data connections; never logged.
         */
        public Builder jobSecret(String v) { return set(Settings.JOB_SECRET, blankToNull(v)); }
        /** Allow running without a secret outside LOCAL discovery ({@code KOLO_INSECURE}). */
        public Builder insecure(boolean v) { return set(Settings.INSECURE, v); }
        /**
         * This worker's PEM certificate chain ({@code KOLO_TLS_CERT}); with {@link #tlsKey} and {@link #tlsCa} it
         * turns on mutual TLS for the event bus and the data plane. Null or empty for none.
         */
        public Builder tlsCert(String path) { return set(Settings.TLS_CERT, blankToNull(path)); }
        /** This worker's PEM PKCS#8 private key, unencrypted ({@code KOLO_TLS_KEY}); null or empty for none. */
        public Builder tlsKey(String path) { return set(Settings.TLS_KEY, blankToNull(path)); }
        /** PEM CA bundle every peer's certificate must chain to ({@code KOLO_TLS_CA}); null or empty for none. */
        public Builder tlsCa(String path) { return set(Settings.TLS_CA, blankToNull(path)); }

        private static String blankToNull(String v) {
            return v == null || v.isBlank() ? null : v.strip();
        }

        /**
         * @return the validated configuration
         * @throws IllegalArgumentException naming the first invalid setting and how to fix it
         */
        public KoloConfig build() {
            int np = get(Settings.NP);
            int min = given.containsKey(Settings.MIN_NP) ? get(Settings.MIN_NP) : np;
            int max = given.containsKey(Settings.MAX_NP) ? get(Settings.MAX_NP) : Math.max(np, min);
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
