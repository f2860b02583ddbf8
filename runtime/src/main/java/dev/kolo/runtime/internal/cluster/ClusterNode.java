package dev.kolo.runtime.internal.cluster;

import com.hazelcast.cluster.Member;
import com.hazelcast.cluster.MembershipEvent;
import com.hazelcast.cluster.MembershipListener;
import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.config.TcpIpConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import dev.kolo.runtime.Discovery;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.MemberAddress;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.internal.control.Addressed;
import dev.kolo.runtime.internal.control.ControlAddresses;
import dev.kolo.runtime.internal.control.ControlCodec;
import dev.kolo.runtime.internal.control.ControlMessage;
import dev.kolo.runtime.internal.control.ControlRejections;
import dev.kolo.runtime.internal.engine.ControlChannel;
import dev.kolo.runtime.internal.security.AuthenticatingCodec;
import dev.kolo.runtime.internal.security.ControlAuthenticator;
import dev.kolo.runtime.internal.security.JobKeys;
import dev.kolo.runtime.internal.security.TlsMaterial;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.spi.cluster.hazelcast.ConfigUtil;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This worker's membership in the job's cluster: one Hazelcast member (cluster name = job name) and the
 * clustered Vert.x on top of it. Publishes every membership change on the local event bus as
 * {@link ControlMessage.MembersChanged}, so the control verticles learn of it as a message.
 */
public final class ClusterNode implements ControlChannel, AutoCloseable {
    private static final DeliveryOptions CONTROL = new DeliveryOptions().setCodecName(ControlCodec.NAME);

    private static final Logger LOG = LoggerFactory.getLogger(ClusterNode.class);
    /** The longest a closing member waits to hand its partitions over before it just stops. */
    private static final long GRACEFUL_SHUTDOWN_SECONDS = 5;

    public static final String NODE_ID_ATTRIBUTE = "__vertx.nodeId";

    private final KoloConfig config;
    private final HazelcastInstance hazelcast;
    private final Vertx vertx;
    private final String nodeId;
    private final ControlAddresses addresses;
    private final ControlRejections rejections;
    private final boolean authenticated;
    private final HazelcastClusterManager clusterManager;

    private ClusterNode(KoloConfig config, HazelcastInstance hazelcast, HazelcastClusterManager clusterManager,
                        Vertx vertx, ControlRejections rejections, boolean authenticated) {
        this.config = config;
        this.clusterManager = clusterManager;
        this.hazelcast = hazelcast;
        this.vertx = vertx;
        this.nodeId = nodeIdOf(hazelcast.getCluster().getLocalMember());
        this.addresses = new ControlAddresses(config.get(Settings.JOB));
        this.rejections = rejections;
        this.authenticated = authenticated;
    }

    /**
     * Joins (or forms) the job's cluster; blocks until the member is up or fails with a clear error.
     *
     * @param tls this worker's TLS material, or null: with it the event bus between workers runs mutual TLS
     *        (Hazelcast's own member protocol stays plain: open source Hazelcast has no TLS)
     */
    public static ClusterNode start(KoloConfig config, io.micrometer.core.instrument.MeterRegistry registry, TlsMaterial tls) {
        checkResolvable(config);
        checkClusterPortFree(config);
        HazelcastInstance hz;
        ShutdownQuietLogging.install();
        try {
            hz = Hazelcast.newHazelcastInstance(hazelcastConfig(config));
            ShutdownQuietLogging.started(hz);
        } catch (RuntimeException e) {
            throw new KoloException(describeStartFailure(config, e), e);
        }
        try {
            EventBusOptions eventBus = new EventBusOptions().setHost(config.get(Settings.HOST)).setPort(0)
                    .setClusterPublicHost(config.get(Settings.HOST));
            if (tls != null) {
                tls.secure(eventBus);
            }
            VertxOptions options = new VertxOptions().setEventBusOptions(eventBus)
                    .setMetricsOptions(new io.vertx.micrometer.MicrometerMetricsOptions()
                            .setEnabled(config.get(Settings.METRICS_PORT) != 0)
                            // Per-message event-bus meters (address tags, handler timers) cost more than a
                            // small collective itself; Kolo's negotiation and collective meters cover it.
                            .addDisabledMetricsCategory(io.vertx.micrometer.MetricsDomain.EVENT_BUS));
            HazelcastClusterManager clusterManager = new HazelcastClusterManager(hz);
            var builder = Vertx.builder().with(options).withClusterManager(clusterManager);
            if (config.get(Settings.METRICS_PORT) != 0) {
                builder.withMetrics(new io.vertx.micrometer.MicrometerMetricsFactory(registry));
            }
            Vertx vertx = builder
                    .buildClustered()
                    .toCompletionStage().toCompletableFuture()
                    .get(config.get(Settings.RENDEZVOUS_TIMEOUT).toMillis(), TimeUnit.MILLISECONDS);
            vertx.exceptionHandler(new UnhandledExceptions());
            JobKeys keys = JobKeys.of(config);
            ControlRejections rejections = new ControlRejections(registry);
            String self = nodeIdOf(hz.getCluster().getLocalMember());
            ControlAuthenticator auth = keys == null ? null
                    : new ControlAuthenticator(keys.controlPlane(), self, id -> describeNode(hz, id));
            vertx.eventBus().registerCodec(new AuthenticatingCodec(auth, rejections));
            ClusterNode node = new ClusterNode(config, hz, clusterManager, vertx, rejections, auth != null);
            node.watchMembers();
            return node;
        } catch (Exception e) {
            hz.getLifecycleService().terminate();
            throw new KoloException("cannot start the clustered event bus on " + config.get(Settings.HOST) + ": " + e, e);
        }
    }

    public static Config hazelcastConfig(KoloConfig c) {
        Config hz = ConfigUtil.loadConfig();
        // Vert.x finds its node id in this member attribute when handed a running Hazelcast instance.
        hz.getMemberAttributeConfig().setAttribute(NODE_ID_ATTRIBUTE, UUID.randomUUID().toString());
        JobKeys keys = JobKeys.of(c);
        // With a secret the cluster name carries a tag of it: workers with another secret (or none), and
        // strangers who do not watch the network, form or find other clusters and never join this one.
        hz.setClusterName(keys == null ? c.get(Settings.JOB) : keys.clusterName());
        hz.setInstanceName("kolo-" + c.get(Settings.JOB) + "-" + UUID.randomUUID());
        hz.setProperty("hazelcast.logging.type", "slf4j");
        hz.setProperty("hazelcast.phone.home.enabled", "false");
        hz.setProperty("hazelcast.shutdownhook.enabled", "false");
        hz.setProperty("hazelcast.graceful.shutdown.max.wait", Long.toString(GRACEFUL_SHUTDOWN_SECONDS));
        // Join at once instead of waiting 5 s to collect other joiners.
        hz.setProperty("hazelcast.wait.seconds.before.join", "0");
        // A hung member is declared lost in seconds, not the default minute.
        long heartbeat = Math.max(1, c.get(Settings.HEARTBEAT_TIMEOUT).toSeconds());
        hz.setProperty("hazelcast.heartbeat.interval.seconds", "1");
        hz.setProperty("hazelcast.max.no.heartbeat.seconds", Long.toString(heartbeat));
        // Members that started apart (split) find each other in seconds, not the default five minutes.
        hz.setProperty("hazelcast.merge.first.run.delay.seconds", "5");
        hz.setProperty("hazelcast.merge.next.run.delay.seconds", "5");
        hz.setProperty("hazelcast.max.join.seconds", "20");
        hz.setProperty("hazelcast.local.localAddress", c.get(Settings.HOST));

        NetworkConfig net = hz.getNetworkConfig();
        net.setPort(c.get(Settings.CLUSTER_PORT));
        net.setPortAutoIncrement(c.get(Settings.DISCOVERY) == Discovery.LOCAL);
        net.setPortCount(Settings.LOCAL_PORT_COUNT);
        net.getInterfaces().setEnabled(true).setInterfaces(List.of(c.get(Settings.HOST)));
        JoinConfig join = net.getJoin();
        join.getMulticastConfig().setEnabled(false);
        join.getAutoDetectionConfig().setEnabled(false);
        join.getKubernetesConfig().setEnabled(false);
        TcpIpConfig tcp = join.getTcpIpConfig().setEnabled(false).setConnectionTimeoutSeconds(3);
        switch (c.get(Settings.DISCOVERY)) {
            case LOCAL:
                // Each address on its own: Hazelcast does not accept a port range string here.
                tcp.setEnabled(true).setMembers(localMembers(c.get(Settings.CLUSTER_PORT)));
                break;
            case MEMBERS:
                List<String> members = new ArrayList<>();
                c.get(Settings.MEMBERS).forEach(m -> members.add(MemberAddress.parse(m).toString()));
                tcp.setEnabled(true).setMembers(members);
                break;
            case KUBERNETES:
                net.setPortAutoIncrement(false);
                net.getInterfaces().setEnabled(false);
                join.getKubernetesConfig().setEnabled(true)
                        .setProperty("service-dns", c.get(Settings.SERVICE_DNS))
                        .setProperty("service-port", Integer.toString(c.get(Settings.SERVICE_PORT)));
                break;
            default:
                throw new AssertionError(c.get(Settings.DISCOVERY));
        }
        return hz;
    }

    private static List<String> localMembers(int basePort) {
        List<String> members = new ArrayList<>();
        for (int i = 0; i < Settings.LOCAL_PORT_COUNT; i++) {
            members.add("127.0.0.1:" + (basePort + i));
        }
        return members;
    }

    private static void checkResolvable(KoloConfig c) {
        if (c.get(Settings.DISCOVERY) != Discovery.MEMBERS) {
            return;
        }
        for (String m : c.get(Settings.MEMBERS)) {
            MemberAddress address = MemberAddress.parse(m);
            try {
                InetAddress.getByName(address.host());
            } catch (UnknownHostException e) {
                throw new KoloException("KOLO_MEMBERS: host '" + address.host() + "' cannot be resolved; fix the "
                        + "member list (--members) or the name service");
            }
        }
    }

    /** Without auto-increment a taken port is fatal: say so plainly before Hazelcast fails on it. */
    private static void checkClusterPortFree(KoloConfig c) {
        if (c.get(Settings.DISCOVERY) == Discovery.LOCAL) {
            return;
        }
        String bindHost = c.get(Settings.DISCOVERY) == Discovery.KUBERNETES ? "0.0.0.0" : c.get(Settings.HOST);
        try (java.net.ServerSocket probe = new java.net.ServerSocket()) {
            probe.setReuseAddress(true);
            probe.bind(new java.net.InetSocketAddress(bindHost, c.get(Settings.CLUSTER_PORT)));
        } catch (java.io.IOException e) {
            throw new KoloException("cluster port " + c.get(Settings.CLUSTER_PORT) + " on " + bindHost + " is already in use ("
                    + e.getMessage() + "); set KOLO_CLUSTER_PORT (--cluster-port) to a free port");
        }
    }

    private static String describeStartFailure(KoloConfig c, RuntimeException e) {
        String text = String.valueOf(e.getMessage());
        if (text.contains("ddress already in use") || text.contains("Port") || text.contains("port")) {
            return "cluster port " + c.get(Settings.CLUSTER_PORT) + " on " + c.get(Settings.HOST) + " is not available (" + text
                    + "); set KOLO_CLUSTER_PORT (--cluster-port) to a free port";
        }
        return "cannot join the cluster of job '" + c.get(Settings.JOB) + "' on " + c.get(Settings.HOST) + ": " + text;
    }

    /** @return "node abcd1234 (member 10.0.0.3:5701)" for a node id that is a member, else just the short id */
    private static String describeNode(HazelcastInstance hz, String id) {
        try {
            for (Member m : hz.getCluster().getMembers()) {
                if (id.equals(nodeIdOf(m))) {
                    return "node " + ControlAddresses.shortId(id) + " (member " + m.getAddress().getHost() + ":"
                            + m.getAddress().getPort() + ")";
                }
            }
        } catch (RuntimeException e) {
            // shutting down: the id alone will do
        }
        return "node " + ControlAddresses.shortId(id) + " (not a cluster member)";
    }

    /**
     * @return what to send to the verticles of {@code toNode}: the message itself, or, when the job has a
     *         secret, the message addressed to that node so that its tag binds the receiver
     */
    Object seal(String toNode, ControlMessage m) {
        return authenticated ? new Addressed(toNode, m) : m;
    }

    /**
     * @return the control message a consumer received, or null if it is to be ignored: a message that failed
     *         authentication (already counted and logged by the codec) or a body that is no control message
     */
    ControlMessage accept(io.vertx.core.eventbus.Message<?> message) {
        Object body = message.body();
        if (body instanceof ControlMessage m) {
            java.util.function.Predicate<ControlMessage> lose = losing;
            return lose != null && lose.test(m) ? null : m;
        }
        if (!(body instanceof ControlAuthenticator.Rejected)) {
            rejections.reject("foreign-body", "a " + (body == null ? "null" : body.getClass().getSimpleName())
                    + " sent to " + message.address() + " (control addresses take only Kolo control messages)");
        }
        return null;
    }

    /** A test's stand-in for the event bus losing messages (it delivers at most once); null when none. */
    private volatile java.util.function.Predicate<ControlMessage> losing;

    /**
     * For tests: control messages received here that {@code lose} matches are dropped silently, as the event bus
     * drops what is in flight while a member reconnects. Null delivers everything again.
     */
    public void loseReceived(java.util.function.Predicate<ControlMessage> lose) {
        this.losing = lose;
    }

    /** @return how many control messages this node dropped as unauthentic or foreign */
    public long rejectedControlMessages() {
        return rejections.total();
    }

    /** @return true when control messages are sealed with the job's key */
    public boolean authenticated() {
        return authenticated;
    }

    private void watchMembers() {
        SeenMemberAddresses seen = SeenMemberAddresses.of(config, hazelcast);
        hazelcast.getCluster().addMembershipListener(new MembershipListener() {
            @Override
            public void memberAdded(MembershipEvent event) {
                ShutdownQuietLogging.arrived(event.getMember().getAddress().toString());
                if (seen != null) {
                    seen.update(event.getMembers());
                }
                publishMembers(List.of());
            }

            @Override
            public void memberRemoved(MembershipEvent event) {
                publishMembers(List.of(nodeIdOf(event.getMember())));
            }
        });
    }

    /**
     * The worker on {@code node} announced its close: what Hazelcast logs about that member as it leaves (a
     * connection refused, a migration to it that failed) is expected, so it goes to DEBUG.
     */
    void departing(String node) {
        for (com.hazelcast.cluster.Member m : hazelcast.getCluster().getMembers()) {
            if (nodeIdOf(m).equals(node)) {
                ShutdownQuietLogging.departing(m.getAddress().toString());
            }
        }
    }

    private void publishMembers(List<String> removed) {
        if (!hazelcast.getLifecycleService().isRunning()) {
            return;
        }
        vertx.eventBus().publish(addresses.membersLocal(nodeId), new ControlMessage.MembersChanged(members(), removed),
                new DeliveryOptions().setCodecName(ControlCodec.NAME).setLocalOnly(true));
    }

    /** @return current cluster members, oldest first: the same order on every member */
    List<String> members() {
        List<String> ids = new ArrayList<>();
        for (Member m : hazelcast.getCluster().getMembers()) {
            ids.add(nodeIdOf(m));
        }
        return ids;
    }

    private static String nodeIdOf(Member m) {
        String id = m.getAttribute(NODE_ID_ATTRIBUTE);
        return id != null ? id : m.getUuid().toString();
    }

    /** @return cluster member addresses, for messages a person reads */
    public List<String> memberAddresses() {
        List<String> out = new ArrayList<>();
        for (Member m : hazelcast.getCluster().getMembers()) {
            out.add(m.getAddress().getHost() + ":" + m.getAddress().getPort());
        }
        return out;
    }

    public String nodeId() {
        return nodeId;
    }

    public Vertx vertx() {
        return vertx;
    }

    public HazelcastInstance hazelcast() {
        return hazelcast;
    }

    public ControlAddresses addresses() {
        return addresses;
    }

    @Override
    public KoloConfig config() {
        return config;
    }

    @Override
    public void sendToCoordinator(String coordinatorNode, ControlMessage message) {
        vertx.eventBus().send(addresses.coordinator(coordinatorNode), seal(coordinatorNode, message), CONTROL);
    }

    /** Leaves the cluster: closes Vert.x (which leaves Hazelcast), bounded in time. */
    @Override
    public void close() {
        close(Duration.ofSeconds(10));
    }

    public void close(Duration deadline) {
        ShutdownQuietLogging.closing(hazelcast);
        try {
            vertx.close().toCompletionStage().toCompletableFuture().get(deadline.toMillis(), TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            LOG.warn("clustered Vert.x did not close within {} ms: {}", deadline.toMillis(), e.toString());
        } finally {
            ThrottlingExecutorLeak.shutDown(clusterManager);
            if (hazelcast.getLifecycleService().isRunning()) {
                // Gracefully: the other members learn at once that this one left, hand its partitions over in
                // order and log nothing about it (terminating makes them find it gone, which they warn about).
                hazelcast.getLifecycleService().shutdown();
            }
            if (hazelcast.getLifecycleService().isRunning()) {
                hazelcast.getLifecycleService().terminate();
            }
        }
    }
}
