package dev.kolo.checkpoint.internal.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.config.Config;
import com.hazelcast.config.JoinConfig;
import com.hazelcast.config.NetworkConfig;
import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import dev.kolo.checkpoint.CheckpointId;
import dev.kolo.checkpoint.CheckpointState;
import dev.kolo.checkpoint.Checkpointer;
import dev.kolo.checkpoint.RestoredCheckpoint;
import dev.kolo.checkpoint.SaveResult;
import dev.kolo.checkpoint.TestStates;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The in-memory replica on three real Hazelcast members in this JVM (TCP-IP join on 127.0.0.1, ports
 * 15711+). The cluster is shared by the cases; the last one terminates the member that wrote.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ClusterReplicaTest {
    private static final int BASE_PORT = 15711;
    private static final int PORTS = 10;
    private static final List<HazelcastInstance> members = new ArrayList<>();

    /** The replica a Checkpointer of job {@code job} keeps on member {@code index}. */
    private static ClusterReplicaStore replicaOn(int index, String job) {
        return new ClusterReplicaStore(members.get(index), ClusterReplicaStore.mapNameFor(job));
    }

    @TempDir
    Path tmp;

    @BeforeAll
    static void formCluster() {
        String cluster = "kolo-ckpt-test-" + UUID.randomUUID();
        for (int i = 0; i < 3; i++) {
            members.add(Hazelcast.newHazelcastInstance(config(cluster)));
        }
        // A joiner returns before every older member has applied the new member list, and on a loaded
        // machine a joiner can miss the master and form its own cluster (healed by the merge below).
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!allSee(3) && System.nanoTime() < deadline) {
            sleep(100);
        }
        for (HazelcastInstance m : members) {
            assertEquals(3, m.getCluster().getMembers().size(), "cluster did not form within 60 s");
        }
    }

    private static boolean allSee(int size) {
        return members.stream().allMatch(m -> m.getCluster().getMembers().size() == size);
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @AfterAll
    static void shutdown() {
        for (HazelcastInstance m : members) {
            try {
                m.getLifecycleService().terminate();
            } catch (RuntimeException e) {
                // already gone
            }
        }
        members.clear();
    }

    private static Config config(String cluster) {
        Config c = new Config();
        c.setClusterName(cluster);
        c.setInstanceName(cluster + "-" + UUID.randomUUID());
        c.setProperty("hazelcast.wait.seconds.before.join", "0");
        c.setProperty("hazelcast.phone.home.enabled", "false");
        c.setProperty("hazelcast.logging.type", "slf4j");
        c.setProperty("hazelcast.shutdownhook.enabled", "false");
        c.setProperty("hazelcast.local.localAddress", "127.0.0.1");
        c.setProperty("hazelcast.merge.first.run.delay.seconds", "5");
        c.setProperty("hazelcast.merge.next.run.delay.seconds", "5");
        NetworkConfig net = c.getNetworkConfig();
        net.setPort(BASE_PORT).setPortAutoIncrement(true).setPortCount(PORTS);
        net.getInterfaces().setEnabled(true).addInterface("127.0.0.1");
        JoinConfig join = net.getJoin();
        join.getMulticastConfig().setEnabled(false);
        join.getAutoDetectionConfig().setEnabled(false);
        List<String> addresses = new ArrayList<>();
        for (int p = BASE_PORT; p < BASE_PORT + PORTS; p++) {
            addresses.add("127.0.0.1:" + p); // one address at a time: a range string is rejected
        }
        join.getTcpIpConfig().setEnabled(true).setMembers(addresses).setConnectionTimeoutSeconds(2);
        return c;
    }

    @Test
    @Order(1)
    void aPeerRestoresFromTheReplicaWithoutTouchingDisk() throws Exception {
        Path dir = tmp.resolve("disk");
        try (Checkpointer writer = Checkpointer.builder().job("peer").directory(dir).replicaStore(replicaOn(0, "peer")).build()) {
            SaveResult r = writer.save(TestStates.state(5, 3, 1 << 20)).get(30, TimeUnit.SECONDS);
            assertEquals(List.of("directory " + dir.toAbsolutePath(), "cluster replica kolo-checkpoints-peer"), r.stores());
        }
        // A new worker elsewhere: no directory at all, only its cluster member.
        try (Checkpointer fresh = Checkpointer.builder().job("peer").replicaStore(replicaOn(1, "peer")).writer(false).build()) {
            RestoredCheckpoint back = fresh.restoreLatest().orElseThrow();
            assertEquals("cluster replica kolo-checkpoints-peer", back.store());
            TestStates.assertContent(back.state(), 3, 1 << 20);
        }
        // With both, the replica is preferred for the same checkpoint.
        try (Checkpointer both = Checkpointer.builder().job("peer").directory(dir).replicaStore(replicaOn(2, "peer")).writer(false)
                .build()) {
            assertEquals("cluster replica kolo-checkpoints-peer", both.restoreLatest().orElseThrow().store());
        }
    }

    @Test
    @Order(2)
    void replicaRetentionKeepsTheNewestAndRemovesOldChunks() throws Exception {
        IMap<String, byte[]> map = members.get(1).getMap(ClusterReplicaStore.mapNameFor("retain"));
        try (Checkpointer writer = Checkpointer.builder().job("retain").replicaStore(replicaOn(0, "retain")).replicaKeep(2).build()) {
            for (long step = 1; step <= 5; step++) {
                writer.save(TestStates.state(step, 2, 10 << 20)).get(30, TimeUnit.SECONDS);
            }
            writer.awaitSaves();
            assertEquals(List.of(new CheckpointId(5, 1), new CheckpointId(4, 1)), writer.list());
        }
        // index + 2 x (manifest + 6 chunks of up to 4 MiB for 20 MiB + 64 bytes of data)
        assertEquals(1 + 2 * (1 + 6), map.size(), map.keySet().toString());
        for (String key : map.keySet()) {
            assertTrue(key.equals("index") || key.startsWith("ckpt-s000000000005-g1@")
                    || key.startsWith("ckpt-s000000000004-g1@"), key);
        }
    }

    @Test
    @Order(3)
    void aCorruptReplicaChunkIsDetectedAndTheDiskCopyIsUsed() throws Exception {
        Path dir = tmp.resolve("disk");
        try (Checkpointer writer = Checkpointer.builder().job("rot").directory(dir).replicaStore(replicaOn(0, "rot")).build()) {
            writer.saveSync(TestStates.state(9, 2, 1 << 20));
        }
        ClusterReplicaStore store = new ClusterReplicaStore(members.get(1), ClusterReplicaStore.mapNameFor("rot"));
        ClusterReplicaStore.Entry e = store.entry(new CheckpointId(9, 1)).orElseThrow();
        IMap<String, byte[]> map = members.get(1).getMap(ClusterReplicaStore.mapNameFor("rot"));
        String key = ClusterReplicaStore.chunkKey(e.prefix(), 0);
        byte[] chunk = map.get(key);
        chunk[5000] ^= 1;
        map.set(key, chunk);
        try (Checkpointer reader = Checkpointer.builder().job("rot").directory(dir).replicaStore(replicaOn(2, "rot")).writer(false)
                .build()) {
            RestoredCheckpoint r = reader.restoreLatest().orElseThrow();
            assertEquals("directory " + dir.toAbsolutePath(), r.store());
            assertEquals(new CheckpointId(9, 1), r.id());
            assertEquals(1, r.skipped().size());
            assertTrue(r.skipped().get(0).contains("kolo-checkpoints-rot/" + e.prefix() + "/chunk/*: tensor 't0'"),
                    r.skipped().get(0));
            assertTrue(r.skipped().get(0).contains("checksum mismatch"), r.skipped().get(0));
        }
    }

    @Test
    @Order(4)
    void theReplicaSurvivesTheLossOfTheMemberThatWroteIt() throws Exception {
        HazelcastInstance writerMember = members.get(0);
        // Small chunks spread the data over many partitions, so most live (primary or backup) on the writer.
        ClusterReplicaStore store = new ClusterReplicaStore(writerMember, ClusterReplicaStore.mapNameFor("loss"), 64 * 1024);
        CheckpointState state = TestStates.state(42, 4, 1 << 20);
        store.commit(TestStates.image(state, "loss"));
        assertTrue(store.entry(state.id()).isPresent());

        writerMember.getLifecycleService().terminate(); // abrupt: no graceful migration
        members.remove(0);

        long start = System.nanoTime();
        ClusterReplicaStore survivor = new ClusterReplicaStore(members.get(0), ClusterReplicaStore.mapNameFor("loss"), 64 * 1024);
        try (Checkpointer reader = Checkpointer.builder().job("loss").store(survivor).writer(false).build()) {
            RestoredCheckpoint r = reader.restoreLatest().orElseThrow();
            assertEquals(new CheckpointId(42, 1), r.id());
            assertTrue(r.skipped().isEmpty(), r.skipped().toString());
            TestStates.assertContent(r.state(), 4, 1 << 20);
        }
        System.out.printf("restored 4 MiB from the surviving members in %.0f ms%n", (System.nanoTime() - start) / 1e6);
    }
}
