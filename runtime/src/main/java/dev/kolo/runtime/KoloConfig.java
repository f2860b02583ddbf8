package dev.kolo.runtime;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.OptionalInt;
import java.util.function.Function;

/**
 * Immutable settings of one worker. Build with {@link #builder()}, or read the {@code KOLO_*} environment
 * variables and {@code -Dkolo.*} system properties with {@link #fromEnvironment()} (a property wins over
 * the variable of the same name: {@code KOLO_MIN_NP} is {@code -Dkolo.min.np}).
 */
public final class KoloConfig {
    /** Default Hazelcast member port; LOCAL discovery probes this port and the next {@value #LOCAL_PORT_COUNT - 1}. */
    public static final int DEFAULT_CLUSTER_PORT = 5701;
    /** How many consecutive cluster ports LOCAL discovery uses, so that several local jobs fit on one machine. */
    public static final int LOCAL_PORT_COUNT = 20;
    /** Fewest characters of a {@code KOLO_JOB_SECRET}: proofs on the wire must not allow guessing it offline. */
    public static final int MIN_SECRET_LENGTH = 16;
    /** The value committed in the Kubernetes manifests, refused so that no job runs with a published secret. */
    static final String MANIFEST_PLACEHOLDER = "replace-me-with-a-random-value";

    private final String jobName;
    private final int np;
    private final int minNp;
    private final int maxNp;
    private final int minNpSetting;
    private final int maxNpSetting;
    private final Discovery discovery;
    private final List<String> members;
    private final String host;
    private final int clusterPort;
    private final int dataPort;
    private final int metricsPort;
    private final Duration rendezvousTimeout;
    private final Duration heartbeatTimeout;
    private final Duration opTimeout;
    private final int rankHint;
    private final String serviceDns;
    private final long fusionThreshold;
    private final Duration cycleTime;
    private final int cacheCapacity;
    private final Duration stallWarning;
    private final Duration stallShutdown;
    private final String timeline;
    private final Duration elasticTimeout;
    private final String jobSecret;
    private final boolean insecure;
    private final String tlsCert;
    private final String tlsKey;
    private final String tlsCa;

    private KoloConfig(Builder b) {
        this.tlsCert = b.tlsCert;
        this.tlsKey = b.tlsKey;
        this.tlsCa = b.tlsCa;
        this.jobName = b.jobName;
        this.np = b.np;
        this.minNp = b.minNp == 0 ? b.np : b.minNp;
        this.maxNp = b.maxNp == 0 ? Math.max(b.np, this.minNp) : b.maxNp;
        this.minNpSetting = b.minNp;
        this.maxNpSetting = b.maxNp;
        this.discovery = b.discovery;
        this.members = List.copyOf(b.members);
        this.host = b.host != null ? b.host : defaultHost(b.discovery);
        this.clusterPort = b.clusterPort;
        this.dataPort = b.dataPort;
        this.metricsPort = b.metricsPort;
        this.rendezvousTimeout = b.rendezvousTimeout;
        this.heartbeatTimeout = b.heartbeatTimeout;
        this.opTimeout = b.opTimeout;
        this.rankHint = b.rankHint;
        this.serviceDns = b.serviceDns;
        this.fusionThreshold = b.fusionThreshold;
        this.cycleTime = b.cycleTime;
        this.cacheCapacity = b.cacheCapacity;
        this.stallWarning = b.stallWarning;
        this.stallShutdown = b.stallShutdown;
        this.timeline = b.timeline;
        this.elasticTimeout = b.elasticTimeout;
        this.jobSecret = b.jobSecret;
        this.insecure = b.insecure;
    }

    /** @return a builder with every setting at its default */
    public static Builder builder() {
        return new Builder();
    }

    /** @return a builder holding this configuration's settings, to change a few */
    public Builder toBuilder() {
        Builder b = new Builder();
        b.jobName = jobName;
        b.np = np;
        b.minNp = minNpSetting; // unset stays unset, so a new np moves the derived bounds with it
        b.maxNp = maxNpSetting;
        b.discovery = discovery;
        b.members = new ArrayList<>(members);
        b.host = host;
        b.clusterPort = clusterPort;
        b.dataPort = dataPort;
        b.metricsPort = metricsPort;
        b.rendezvousTimeout = rendezvousTimeout;
        b.heartbeatTimeout = heartbeatTimeout;
        b.opTimeout = opTimeout;
        b.rankHint = rankHint;
        b.serviceDns = serviceDns;
        b.fusionThreshold = fusionThreshold;
        b.cycleTime = cycleTime;
        b.cacheCapacity = cacheCapacity;
        b.stallWarning = stallWarning;
        b.stallShutdown = stallShutdown;
        b.timeline = timeline;
        b.elasticTimeout = elasticTimeout;
        b.jobSecret = jobSecret;
        b.insecure = insecure;
        b.tlsCert = tlsCert;
        b.tlsKey = tlsKey;
        b.tlsCa = tlsCa;
        return b;
    }

    /**
     * Reads every {@code KOLO_*} setting from system properties and the environment.
     *
     * @throws IllegalArgumentException naming the setting whose value is invalid
     */
    public static KoloConfig fromEnvironment() {
        return fromSource(SettingSource.system());
    }

    /**
     * Reads every {@code KOLO_*} setting like {@link #fromEnvironment()} into a builder whose combination is not
     * checked yet, so that settings applied on top (command-line flags) can complete it: a TLS certificate given
     * as a flag with its CA in the environment, {@code --insecure} beside {@code KOLO_DISCOVERY=members}.
     *
     * @throws IllegalArgumentException naming the setting whose value cannot be parsed
     */
    public static Builder builderFromEnvironment() {
        return builderFromSource(SettingSource.system());
    }

    static KoloConfig fromSource(SettingSource s) {
        return builderFromSource(s).build();
    }

    static Builder builderFromSource(SettingSource s) {
        Builder b = builder();
        s.string("KOLO_JOB").ifPresent(b::jobName);
        s.integer("KOLO_NP").ifPresent(b::np);
        s.integer("KOLO_MIN_NP").ifPresent(b::minNp);
        s.integer("KOLO_MAX_NP").ifPresent(b::maxNp);
        s.string("KOLO_DISCOVERY").map(v -> parseDiscovery(v)).ifPresent(b::discovery);
        s.string("KOLO_MEMBERS").map(KoloConfig::splitList).ifPresent(b::members);
        s.string("KOLO_HOST").ifPresent(b::host);
        s.integer("KOLO_CLUSTER_PORT").ifPresent(b::clusterPort);
        s.integer("KOLO_DATA_PORT").ifPresent(b::dataPort);
        s.integer("KOLO_METRICS_PORT").ifPresent(b::metricsPort);
        s.seconds("KOLO_RENDEZVOUS_TIMEOUT").ifPresent(b::rendezvousTimeout);
        s.seconds("KOLO_HEARTBEAT_TIMEOUT").ifPresent(b::heartbeatTimeout);
        s.seconds("KOLO_OP_TIMEOUT").ifPresent(b::opTimeout);
        s.string("KOLO_SERVICE_DNS").ifPresent(b::serviceDns);
        s.longInteger("KOLO_FUSION_THRESHOLD").ifPresent(b::fusionThreshold);
        s.string("KOLO_CYCLE_TIME").map(v -> Duration.ofNanos(Math.round(
                SettingSource.parse("KOLO_CYCLE_TIME", v, Double::parseDouble, "a number of milliseconds") * 1e6)))
                .ifPresent(b::cycleTime);
        s.integer("KOLO_CACHE_CAPACITY").ifPresent(b::cacheCapacity);
        s.seconds("KOLO_STALL_WARNING").ifPresent(b::stallWarning);
        s.seconds("KOLO_STALL_SHUTDOWN").ifPresent(b::stallShutdown);
        s.string("KOLO_TIMELINE").ifPresent(b::timeline);
        s.seconds("KOLO_ELASTIC_TIMEOUT").ifPresent(b::elasticTimeout);
        // Trimmed like every setting, so a secret file's trailing newline does not make workers disagree.
        s.string("KOLO_JOB_SECRET").ifPresent(b::jobSecret);
        s.bool("KOLO_INSECURE").ifPresent(b::insecure);
        s.string("KOLO_TLS_CERT").ifPresent(b::tlsCert);
        s.string("KOLO_TLS_KEY").ifPresent(b::tlsKey);
        s.string("KOLO_TLS_CA").ifPresent(b::tlsCa);
        OptionalInt hint = s.integer("KOLO_RANK_HINT");
        if (hint.isPresent()) {
            b.rankHint(hint.getAsInt());
        } else if (b.discovery == Discovery.KUBERNETES) {
            // A StatefulSet pod is named <set>-<ordinal>: the ordinal is a stable rank hint.
            s.string("HOSTNAME").map(KoloConfig::podOrdinal).filter(o -> o >= 0).ifPresent(b::rankHint);
        }
        return b;
    }

    static Discovery parseDiscovery(String v) {
        try {
            return Discovery.valueOf(v.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("KOLO_DISCOVERY must be local, members or kubernetes (got '" + v + "')");
        }
    }

    static List<String> splitList(String v) {
        List<String> out = new ArrayList<>();
        for (String part : v.split(",")) {
            if (!part.isBlank()) {
                out.add(part.trim());
            }
        }
        return out;
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

    /** @return the job name, which is also the cluster name: jobs with different names never mix */
    public String jobName() {
        return jobName;
    }

    /** @return the number of workers the first rendezvous waits for */
    public int np() {
        return np;
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
        return discovery;
    }

    /** @return cluster member addresses for {@link Discovery#MEMBERS} ({@code host} or {@code host:port}) */
    public List<String> members() {
        return members;
    }

    /** @return the address this worker binds and advertises for the cluster and data plane */
    public String host() {
        return host;
    }

    /** @return the Hazelcast member port (LOCAL discovery moves up to the next free one) */
    public int clusterPort() {
        return clusterPort;
    }

    /** @return the data-plane port; 0 picks a free one */
    public int dataPort() {
        return dataPort;
    }

    /** @return the HTTP metrics and health port; 0 disables the endpoint */
    public int metricsPort() {
        return metricsPort;
    }

    /** @return how long rendezvous may take before it fails with a report of who arrived */
    public Duration rendezvousTimeout() {
        return rendezvousTimeout;
    }

    /** @return how long a silent (hung) cluster member is tolerated before it is declared lost */
    public Duration heartbeatTimeout() {
        return heartbeatTimeout;
    }

    /** @return the longest any single collective or barrier may wait before it fails */
    public Duration opTimeout() {
        return opTimeout;
    }

    /** @return the stable rank this worker asks for (e.g. a pod ordinal), if any */
    public OptionalInt rankHint() {
        return rankHint < 0 ? OptionalInt.empty() : OptionalInt.of(rankHint);
    }

    /** @return the headless Service DNS name used by {@link Discovery#KUBERNETES} */
    public String serviceDns() {
        return serviceDns;
    }

    /** @return the largest fused allreduce buffer in bytes; 0 disables fusion */
    public long fusionThreshold() {
        return fusionThreshold;
    }

    /** @return how long the coordinator batches ready ops while more are half-submitted */
    public Duration cycleTime() {
        return cycleTime;
    }

    /**
     * Default cache size: larger than the tensors of any real step (a large model has a few thousand), so a
     * step never evicts its own tensors; an entry costs a few hundred bytes, and only entries in use cost
     * anything in an agreement round (a bit each).
     */
    public static final int DEFAULT_CACHE_CAPACITY = 65536;
    /** Largest cache: a round message carries two bits per entry. */
    public static final int MAX_CACHE_CAPACITY = 1 << 24;
    /**
     * Default stall shutdown: long enough for what one rank may legitimately do while the others wait at a
     * collective (evaluate, write a checkpoint), short enough that a rank that never submits a tensor ends the
     * step with an error rather than a hang; PyTorch's default collective timeout is the same 10 minutes.
     */
    public static final Duration DEFAULT_STALL_SHUTDOWN = Duration.ofMinutes(10);

    /**
     * @return how many tensor specs each generation's cache holds (the ranks agree on a cached tensor among
     *         themselves, without the coordinator); 0 disables the cache
     */
    public int cacheCapacity() {
        return cacheCapacity;
    }

    /** @return after how long a tensor some ranks submitted and others not is logged */
    public Duration stallWarning() {
        return stallWarning;
    }

    /**
     * @return after how long such a tensor fails on every rank, naming the ranks that did not submit it (a rank
     *         that submits it later fails at once); zero never
     */
    public Duration stallShutdown() {
        return stallShutdown;
    }

    /**
     * @return where to write the Chrome-trace timeline, or null when off; with several workers a
     *         {@code {rank}} in the path is replaced by the rank
     */
    public String timeline() {
        return timeline;
    }

    /** @return how long an elastic job waits for enough workers to form a new generation after a change */
    public Duration elasticTimeout() {
        return elasticTimeout;
    }

    /**
     * @return true when the job has a shared secret ({@code KOLO_JOB_SECRET}): its control messages and data
     *         connections are authenticated with keys derived from it
     */
    public boolean hasJobSecret() {
        return jobSecret != null;
    }

    /** The shared secret, or null. Never printed (not in {@link #toString()}): only key derivation reads it. */
    public String jobSecret() {
        return jobSecret;
    }

    /**
     * @return true when the worker may run without a secret outside LOCAL discovery ({@code KOLO_INSECURE}),
     *         on a network where everyone who can reach its ports is trusted
     */
    public boolean insecure() {
        return insecure;
    }

    /**
     * @return true when {@code KOLO_TLS_CERT}, {@code KOLO_TLS_KEY} and {@code KOLO_TLS_CA} are set: the event
     *         bus and the data plane then run mutual TLS 1.3, peers identified by the job's CA
     */
    public boolean tls() {
        return tlsCert != null;
    }

    /** @return path of this worker's PEM certificate chain ({@code KOLO_TLS_CERT}), or null without TLS */
    public String tlsCert() {
        return tlsCert;
    }

    /** @return path of this worker's PEM PKCS#8 private key ({@code KOLO_TLS_KEY}), or null without TLS */
    public String tlsKey() {
        return tlsKey;
    }

    /** @return path of the PEM CA bundle peers' certificates must chain to ({@code KOLO_TLS_CA}), or null */
    public String tlsCa() {
        return tlsCa;
    }

    @Override
    public String toString() {
        // Never the secret itself: configurations end up in logs.
        return "KoloConfig{job=" + jobName + ", np=" + np + ", minNp=" + minNp + ", maxNp=" + maxNp
                + ", discovery=" + discovery + ", host=" + host + ", clusterPort=" + clusterPort
                + ", dataPort=" + dataPort + ", rankHint=" + rankHint + ", jobSecret="
                + (jobSecret != null ? "set" : "none") + (insecure ? ", insecure" : "") + (tls() ? ", tls" : "") + "}";
    }

    /** Collects settings; {@link #build()} validates them together. */
    public static final class Builder {
        private String jobName = "kolo";
        private int np = 1;
        private int minNp;
        private int maxNp;
        private Discovery discovery = Discovery.LOCAL;
        private List<String> members = new ArrayList<>();
        private String host;
        private int clusterPort = DEFAULT_CLUSTER_PORT;
        private int dataPort;
        private int metricsPort = 9404;
        private Duration rendezvousTimeout = Duration.ofSeconds(60);
        private Duration heartbeatTimeout = Duration.ofSeconds(5);
        private Duration opTimeout = Duration.ofMinutes(30);
        private int rankHint = -1;
        private String serviceDns;
        private long fusionThreshold = 64L << 20;
        private Duration cycleTime = Duration.ofMillis(1);
        private int cacheCapacity = DEFAULT_CACHE_CAPACITY;
        private Duration stallWarning = Duration.ofSeconds(60);
        private Duration stallShutdown = DEFAULT_STALL_SHUTDOWN;
        private String timeline;
        private Duration elasticTimeout = Duration.ofSeconds(600);
        private String jobSecret;
        private boolean insecure;
        private String tlsCert;
        private String tlsKey;
        private String tlsCa;

        private Builder() {
        }

        /** Job name ({@code KOLO_JOB}); also the cluster name. */
        public Builder jobName(String v) { this.jobName = v; return this; }
        /** Number of workers ({@code KOLO_NP}). */
        public Builder np(int v) { this.np = v; return this; }
        /** Fewest workers of an elastic job ({@code KOLO_MIN_NP}). */
        public Builder minNp(int v) { this.minNp = v; return this; }
        /** Most workers of an elastic job ({@code KOLO_MAX_NP}). */
        public Builder maxNp(int v) { this.maxNp = v; return this; }
        /** Discovery mode ({@code KOLO_DISCOVERY}). */
        public Builder discovery(Discovery v) { this.discovery = Objects.requireNonNull(v); return this; }
        /** Member addresses for MEMBERS discovery ({@code KOLO_MEMBERS}, comma-separated). */
        public Builder members(List<String> v) { this.members = new ArrayList<>(v); return this; }
        /** Address to bind and advertise ({@code KOLO_HOST}). */
        public Builder host(String v) { this.host = v; return this; }
        /** Hazelcast member port ({@code KOLO_CLUSTER_PORT}). */
        public Builder clusterPort(int v) { this.clusterPort = v; return this; }
        /** Data-plane port, 0 for any free one ({@code KOLO_DATA_PORT}). */
        public Builder dataPort(int v) { this.dataPort = v; return this; }
        /** Metrics port, 0 disables ({@code KOLO_METRICS_PORT}). */
        public Builder metricsPort(int v) { this.metricsPort = v; return this; }
        /** Rendezvous deadline ({@code KOLO_RENDEZVOUS_TIMEOUT}, seconds). */
        public Builder rendezvousTimeout(Duration v) { this.rendezvousTimeout = v; return this; }
        /** Silence after which a member is declared lost ({@code KOLO_HEARTBEAT_TIMEOUT}, seconds). */
        public Builder heartbeatTimeout(Duration v) { this.heartbeatTimeout = v; return this; }
        /** Deadline of any single collective ({@code KOLO_OP_TIMEOUT}, seconds). */
        public Builder opTimeout(Duration v) { this.opTimeout = v; return this; }
        /** Stable rank to ask for, or -1 for none ({@code KOLO_RANK_HINT}). */
        public Builder rankHint(int v) { this.rankHint = v; return this; }
        /** Headless Service DNS name for KUBERNETES discovery ({@code KOLO_SERVICE_DNS}). */
        public Builder serviceDns(String v) { this.serviceDns = v; return this; }
        /** Largest fused allreduce in bytes, 0 disables fusion ({@code KOLO_FUSION_THRESHOLD}). */
        public Builder fusionThreshold(long v) { this.fusionThreshold = v; return this; }
        /** Batching window of the coordinator ({@code KOLO_CYCLE_TIME}, milliseconds). */
        public Builder cycleTime(Duration v) { this.cycleTime = v; return this; }
        /** Tensor specs each generation caches, 0 disables ({@code KOLO_CACHE_CAPACITY}). */
        public Builder cacheCapacity(int v) { this.cacheCapacity = v; return this; }
        /** Stall warning delay ({@code KOLO_STALL_WARNING}, seconds). */
        public Builder stallWarning(Duration v) { this.stallWarning = v; return this; }
        /** Stall shutdown delay, zero never ({@code KOLO_STALL_SHUTDOWN}, seconds; default 600). */
        public Builder stallShutdown(Duration v) { this.stallShutdown = v; return this; }
        /** Chrome-trace output path, null for none ({@code KOLO_TIMELINE}). */
        public Builder timeline(String v) { this.timeline = v; return this; }
        /** Wait for a new elastic generation ({@code KOLO_ELASTIC_TIMEOUT}, seconds). */
        public Builder elasticTimeout(Duration v) { this.elasticTimeout = v; return this; }
        /**
         * Shared secret of the job ({@code KOLO_JOB_SECRET}), the same on every worker, at least
         * {@value KoloConfig#MIN_SECRET_LENGTH} characters; null for none. Authenticates control messages and
         * data connections; never logged.
         */
        public Builder jobSecret(String v) { this.jobSecret = v == null || v.isEmpty() ? null : v; return this; }
        /** Allow running without a secret outside LOCAL discovery ({@code KOLO_INSECURE}). */
        public Builder insecure(boolean v) { this.insecure = v; return this; }
        /**
         * This worker's PEM certificate chain ({@code KOLO_TLS_CERT}); with {@link #tlsKey} and {@link #tlsCa} it
         * turns on mutual TLS for the event bus and the data plane. Null or empty for none.
         */
        public Builder tlsCert(String path) { this.tlsCert = blankToNull(path); return this; }
        /** This worker's PEM PKCS#8 private key, unencrypted ({@code KOLO_TLS_KEY}); null or empty for none. */
        public Builder tlsKey(String path) { this.tlsKey = blankToNull(path); return this; }
        /** PEM CA bundle every peer's certificate must chain to ({@code KOLO_TLS_CA}); null or empty for none. */
        public Builder tlsCa(String path) { this.tlsCa = blankToNull(path); return this; }

        private static String blankToNull(String v) {
            return v == null || v.isBlank() ? null : v.strip();
        }

        /**
         * @return the validated configuration
         * @throws IllegalArgumentException naming the first invalid setting and how to fix it
         */
        public KoloConfig build() {
            require(jobName != null && jobName.matches("[A-Za-z0-9][A-Za-z0-9._-]{0,62}"),
                    "KOLO_JOB must be 1-63 letters, digits, '.', '_' or '-' (got '" + jobName + "')");
            require(np >= 1, "KOLO_NP (--np) must be at least 1 (got " + np + ")");
            require(minNp >= 0, "KOLO_MIN_NP (--min-np) must be at least 1 (got " + minNp + ")");
            int min = minNp == 0 ? np : minNp;
            int max = maxNp == 0 ? Math.max(np, min) : maxNp;
            require(min <= np, "KOLO_MIN_NP (" + min + ") must not exceed KOLO_NP (" + np + ")");
            require(np <= max, "KOLO_NP (" + np + ") must not exceed KOLO_MAX_NP (" + max + ")");
            port("KOLO_CLUSTER_PORT (--cluster-port)", clusterPort, false);
            port("KOLO_DATA_PORT (--data-port)", dataPort, true);
            port("KOLO_METRICS_PORT (--metrics-port)", metricsPort, true);
            positive("KOLO_RENDEZVOUS_TIMEOUT", rendezvousTimeout);
            positive("KOLO_HEARTBEAT_TIMEOUT", heartbeatTimeout);
            positive("KOLO_OP_TIMEOUT", opTimeout);
            require(rankHint >= -1, "KOLO_RANK_HINT must be 0 or more (got " + rankHint + ")");
            require(fusionThreshold >= 0 && fusionThreshold <= Integer.MAX_VALUE, "KOLO_FUSION_THRESHOLD must be 0-"
                    + Integer.MAX_VALUE + " bytes (got " + fusionThreshold + ")");
            require(cycleTime != null && !cycleTime.isNegative(), "KOLO_CYCLE_TIME must be 0 or more milliseconds");
            require(cacheCapacity >= 0 && cacheCapacity <= MAX_CACHE_CAPACITY, "KOLO_CACHE_CAPACITY must be 0 (off) to "
                    + MAX_CACHE_CAPACITY + " (got " + cacheCapacity + ")");
            positive("KOLO_STALL_WARNING", stallWarning);
            positive("KOLO_ELASTIC_TIMEOUT", elasticTimeout);
            require(stallShutdown != null && !stallShutdown.isNegative(), "KOLO_STALL_SHUTDOWN must be 0 (never) "
                    + "or more seconds");
            if (discovery == Discovery.MEMBERS) {
                require(!members.isEmpty(), "discovery 'members' needs KOLO_MEMBERS (--members): a comma-separated "
                        + "list of host[:port] cluster addresses");
                members.forEach(MemberAddress::parse);
            }
            if (jobSecret != null) {
                // The message never contains the value: it would end up in logs.
                require(jobSecret.length() >= MIN_SECRET_LENGTH, "KOLO_JOB_SECRET is too short (" + jobSecret.length()
                        + " characters): use at least " + MIN_SECRET_LENGTH + " random characters, e.g. "
                        + "$(head -c 32 /dev/urandom | base64), the same on every worker");
                require(!jobSecret.strip().equals(MANIFEST_PLACEHOLDER), "KOLO_JOB_SECRET is still the placeholder of "
                        + "k8s-manifests/base/secret.yaml: create a random one before deploying (see "
                        + "k8s-manifests/README.md, Deploy)");
            }
            checkTls();
            if (discovery == Discovery.KUBERNETES) {
                require(serviceDns != null && !serviceDns.isBlank(), "discovery 'kubernetes' needs KOLO_SERVICE_DNS: "
                        + "the headless Service's DNS name, e.g. kolo-workers.default.svc.cluster.local");
            }
            return new KoloConfig(this);
        }

        /** All three TLS settings or none: a half-configured worker would silently talk plaintext. */
        private void checkTls() {
            List<String> missing = new ArrayList<>();
            if (tlsCert == null) {
                missing.add("KOLO_TLS_CERT");
            }
            if (tlsKey == null) {
                missing.add("KOLO_TLS_KEY");
            }
            if (tlsCa == null) {
                missing.add("KOLO_TLS_CA");
            }
            require(missing.isEmpty() || missing.size() == 3, "TLS needs KOLO_TLS_CERT, KOLO_TLS_KEY and KOLO_TLS_CA "
                    + "together, but " + String.join(" and ", missing) + (missing.size() == 1 ? " is" : " are")
                    + " not set: set " + (missing.size() == 1 ? "it" : "them") + " (PEM files: this worker's "
                    + "certificate chain, its PKCS#8 private key, the job's CA bundle), or unset the others to run "
                    + "without TLS");
        }

        private static void port(String name, int value, boolean zeroAllowed) {
            require(value >= (zeroAllowed ? 0 : 1) && value <= 65535,
                    name + " must be " + (zeroAllowed ? "0" : "1") + "-65535 (got " + value + ")");
        }

        private static void positive(String name, Duration d) {
            require(d != null && !d.isNegative() && !d.isZero(), name + " must be a positive number of seconds");
        }

        private static void require(boolean ok, String message) {
            if (!ok) {
                throw new IllegalArgumentException(message);
            }
        }
    }

    /** Where settings come from; a function so tests can supply their own. */
    interface SettingSource {
        String raw(String envName);

        static SettingSource system() {
            return name -> {
                String prop = System.getProperty(propertyName(name));
                return prop != null ? prop : System.getenv(name);
            };
        }

        static String propertyName(String envName) {
            if (!envName.startsWith("KOLO_")) {
                return envName;
            }
            return "kolo." + envName.substring(5).toLowerCase(Locale.ROOT).replace('_', '.');
        }

        default java.util.Optional<String> string(String name) {
            String v = raw(name);
            return v == null || v.isBlank() ? java.util.Optional.empty() : java.util.Optional.of(v.trim());
        }

        default OptionalInt integer(String name) {
            java.util.Optional<String> v = string(name);
            if (v.isEmpty()) {
                return OptionalInt.empty();
            }
            return OptionalInt.of(parse(name, v.get(), Integer::parseInt, "a whole number"));
        }

        default java.util.OptionalLong longInteger(String name) {
            java.util.Optional<String> v = string(name);
            if (v.isEmpty()) {
                return java.util.OptionalLong.empty();
            }
            return java.util.OptionalLong.of(parse(name, v.get(), Long::parseLong, "a whole number"));
        }

        default java.util.Optional<Boolean> bool(String name) {
            return string(name).map(v -> {
                String t = v.toLowerCase(Locale.ROOT);
                if (t.equals("true") || t.equals("1") || t.equals("yes")) {
                    return true;
                }
                if (t.equals("false") || t.equals("0") || t.equals("no")) {
                    return false;
                }
                throw new IllegalArgumentException(name + " must be true or false (got '" + v + "')");
            });
        }

        default java.util.Optional<Duration> seconds(String name) {
            return string(name).map(v -> Duration.ofMillis(
                    Math.round(parse(name, v, Double::parseDouble, "a number of seconds") * 1000)));
        }

        static <T> T parse(String name, String v, Function<String, T> parser, String what) {
            try {
                return parser.apply(v);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + " must be " + what + " (got '" + v + "')");
            }
        }
    }
}
