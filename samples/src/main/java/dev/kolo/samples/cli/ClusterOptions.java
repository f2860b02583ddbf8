package dev.kolo.samples.cli;

import dev.kolo.runtime.Discovery;
import dev.kolo.runtime.KoloConfig;
import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * The worker's cluster settings as flags. Each flag overrides the {@code KOLO_*} variable of the same name;
 * flags left out keep the environment's value or the default.
 */
final class ClusterOptions {
    @Option(names = "--job", paramLabel = "NAME", description = "Job name; also the cluster name (KOLO_JOB).")
    String job;

    @Option(names = "--np", paramLabel = "N", description = "Number of workers (KOLO_NP).")
    Integer np;

    @Option(names = "--min-np", paramLabel = "N", description = "Fewest workers of an elastic job (KOLO_MIN_NP).")
    Integer minNp;

    @Option(names = "--max-np", paramLabel = "N", description = "Most workers of an elastic job (KOLO_MAX_NP).")
    Integer maxNp;

    @Option(names = "--discovery", paramLabel = "MODE",
            description = "How workers find each other: local, members or kubernetes (KOLO_DISCOVERY).")
    String discovery;

    @Option(names = "--members", paramLabel = "HOST[:PORT],...", split = ",",
            description = "Cluster addresses for --discovery members (KOLO_MEMBERS).")
    List<String> members;

    @Option(names = "--host", paramLabel = "ADDRESS", description = "Address to bind and advertise (KOLO_HOST).")
    String host;

    @Option(names = "--cluster-port", paramLabel = "PORT", description = "Cluster member port (KOLO_CLUSTER_PORT).")
    Integer clusterPort;

    @Option(names = "--data-port", paramLabel = "PORT",
            description = "Data-plane port, 0 for any free one (KOLO_DATA_PORT).")
    Integer dataPort;

    @Option(names = "--metrics-port", paramLabel = "PORT",
            description = "Metrics HTTP port, 0 disables (KOLO_METRICS_PORT).")
    Integer metricsPort;

    @Option(names = "--rendezvous-timeout", paramLabel = "SECONDS",
            description = "How long to wait for the other workers (KOLO_RENDEZVOUS_TIMEOUT).")
    Double rendezvousTimeout;

    @Option(names = "--heartbeat-timeout", paramLabel = "SECONDS",
            description = "Silence after which a worker is declared lost (KOLO_HEARTBEAT_TIMEOUT).")
    Double heartbeatTimeout;

    @Option(names = "--rank-hint", paramLabel = "RANK", description = "Stable rank to ask for (KOLO_RANK_HINT).")
    Integer rankHint;

    // No flag for the secret itself: a command line is visible to every user of the machine (ps).
    @Option(names = "--insecure", description = "Run without KOLO_JOB_SECRET outside local discovery, on a network "
            + "where everyone is trusted (KOLO_INSECURE).")
    Boolean insecure;

    // Paths only (not secret themselves): all three turn on mutual TLS for the event bus and the data plane.
    @Option(names = "--tls-cert", paramLabel = "PEM", description = "This worker's PEM certificate chain (KOLO_TLS_CERT).")
    String tlsCert;

    @Option(names = "--tls-key", paramLabel = "PEM",
            description = "This worker's unencrypted PKCS#8 PEM private key (KOLO_TLS_KEY).")
    String tlsKey;

    @Option(names = "--tls-ca", paramLabel = "PEM",
            description = "PEM CA bundle every peer's certificate must chain to (KOLO_TLS_CA).")
    String tlsCa;

    /** @return the environment's configuration with every given flag applied on top */
    KoloConfig toConfig() {
        KoloConfig.Builder b = KoloConfig.builderFromEnvironment();
        if (job != null) b.jobName(job);
        if (np != null) b.np(np);
        if (minNp != null) b.minNp(minNp);
        if (maxNp != null) b.maxNp(maxNp);
        if (discovery != null) b.discovery(parseDiscovery(discovery));
        if (members != null) b.members(members);
        if (host != null) b.host(host);
        if (clusterPort != null) b.clusterPort(clusterPort);
        if (dataPort != null) b.dataPort(dataPort);
        if (metricsPort != null) b.metricsPort(metricsPort);
        if (rendezvousTimeout != null) b.rendezvousTimeout(seconds("--rendezvous-timeout", rendezvousTimeout));
        if (heartbeatTimeout != null) b.heartbeatTimeout(seconds("--heartbeat-timeout", heartbeatTimeout));
        if (rankHint != null) b.rankHint(rankHint);
        if (insecure != null) b.insecure(insecure);
        if (tlsCert != null) b.tlsCert(tlsCert);
        if (tlsKey != null) b.tlsKey(tlsKey);
        if (tlsCa != null) b.tlsCa(tlsCa);
        return b.build();
    }

    private static Discovery parseDiscovery(String v) {
        try {
            return Discovery.valueOf(v.trim().toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--discovery must be local, members or kubernetes (got '" + v + "')");
        }
    }

    private static Duration seconds(String flag, double value) {
        if (!(value > 0)) {
            throw new IllegalArgumentException(flag + " must be a positive number of seconds (got " + value + ")");
        }
        return Duration.ofMillis(Math.round(value * 1000));
    }
}
