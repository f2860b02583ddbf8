package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.hazelcast.core.Hazelcast;
import com.hazelcast.core.HazelcastInstance;
import dev.kolo.runtime.internal.cluster.ClusterNode;
import dev.kolo.runtime.internal.control.ControlAddresses;
import dev.kolo.runtime.internal.control.ControlCodec;
import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.ControlMessage.CoordinatorAnnounce;
import dev.kolo.runtime.internal.control.ControlMessage.ErrorKind;
import dev.kolo.runtime.internal.control.ControlMessage.Hello;
import dev.kolo.runtime.internal.control.ControlMessage.MembershipPending;
import dev.kolo.runtime.internal.control.ControlMessage.OpResponse;
import dev.kolo.runtime.internal.control.ControlMessage.ResponseEntry;
import dev.kolo.runtime.internal.control.OpType;
import dev.kolo.runtime.internal.control.WorkerInfo;
import io.vertx.core.Vertx;
import io.vertx.core.VertxOptions;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBusOptions;
import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * A job with a secret, as real workers in this JVM: it computes; a worker with another secret (or none)
 * cannot take part and says why; control messages forged by a cluster member without the secret are
 * ignored and logged while the job goes on.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class AuthenticationTest {
    private static final String SECRET = "test-secret-of-the-auth-job";
    private final String job = LocalJob.uniqueName("auth");
    private LocalJob secured;

    private KoloConfig.Builder config() {
        return LocalJob.config(job, 2).set(Settings.JOB_SECRET, SECRET);
    }

    @BeforeAll
    void form() {
        secured = LocalJob.start(job, 2, i -> config().build());
    }

    @AfterAll
    void close() {
        if (secured != null) {
            secured.close();
        }
    }

    private void collectivesAreCorrect(String tag) throws Exception {
        List<float[]> sums = secured.onAll(k -> k.allreduce(tag + "/sum", Tensor.of(new float[] {k.rank() + 1, 10}, 2),
                ReduceOp.SUM).toFloatArray());
        for (float[] s : sums) {
            assertArrayEquals(new float[] {3, 20}, s);
        }
        List<float[]> gathered = secured.onAll(k -> k.allgather(tag + "/gather",
                Tensor.of(new float[] {k.rank()}, 1)).toFloatArray());
        for (float[] g : gathered) {
            assertArrayEquals(new float[] {0, 1}, g);
        }
        List<float[]> broadcast = secured.onAll(k -> k.broadcast(tag + "/bcast",
                Tensor.of(new float[] {k.rank() == 1 ? 42 : -1}, 1), 1).toFloatArray());
        for (float[] b : broadcast) {
            assertArrayEquals(new float[] {42}, b);
        }
        secured.onAll(k -> {
            k.barrier();
            return null;
        });
    }

    @Test
    void aJobWithASecretComputesCorrectly() throws Exception {
        for (Kolo k : secured.workers) {
            assertEquals(2, k.size());
            assertTrue(k.clusterNode().authenticated());
        }
        collectivesAreCorrect("plain");
        // Many small ops back to back: no control message is mistaken for a replay.
        List<Float> last = secured.onAll(k -> {
            float v = 0;
            for (int i = 0; i < 200; i++) {
                v = k.allreduce("small", Tensor.of(new float[] {i}, 1), ReduceOp.SUM).toFloatArray()[0];
            }
            return v;
        });
        assertEquals(List.of(398f, 398f), last);
    }

    @Test
    void workersWithAnotherSecretOrNoneCannotTakePart() throws Exception {
        Duration deadline = Duration.ofSeconds(6);
        long t0 = System.nanoTime();
        CompletableFuture<KoloException> wrong = CompletableFuture.supplyAsync(() -> assertThrows(KoloException.class,
                () -> Kolo.init(config().set(Settings.JOB_SECRET, "some-other-secret-entirely").rendezvousTimeout(deadline).build())));
        CompletableFuture<KoloException> none = CompletableFuture.supplyAsync(() -> assertThrows(KoloException.class,
                () -> Kolo.init(config().set(Settings.JOB_SECRET, null).rendezvousTimeout(deadline).build())));
        String wrongMessage = wrong.get(60, TimeUnit.SECONDS).getMessage();
        String noneMessage = none.get(60, TimeUnit.SECONDS).getMessage();
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0);
        assertTrue(seconds < 30, "failed only after " + seconds + " s");
        assertTrue(wrongMessage.contains("timed out") && wrongMessage.contains("another KOLO_JOB_SECRET")
                && wrongMessage.contains("set the same KOLO_JOB_SECRET on every worker"), wrongMessage);
        assertFalse(wrongMessage.contains("some-other-secret") || wrongMessage.contains(SECRET), wrongMessage);
        assertTrue(noneMessage.contains("has no KOLO_JOB_SECRET"), noneMessage);
        // The job itself never saw them.
        for (Kolo k : secured.workers) {
            assertEquals(2, k.size());
            assertEquals(1, k.generation());
        }
        collectivesAreCorrect("after-impostors");
    }

    @Test
    void forgedControlMessagesFromAMemberWithoutTheSecretAreIgnoredAndLogged() throws Exception {
        Kolo victim = secured.workers.get(0);
        String coordinator = victim.coordinatorNode();
        long generation = victim.generation();
        // The stranger learned the cluster name by watching the network, but has no key: it joins the
        // Hazelcast cluster and the event bus and sends plain control messages, as an unauthenticated worker would.
        HazelcastInstance hz = Hazelcast.newHazelcastInstance(ClusterNode.hazelcastConfig(config().build()));
        Vertx stranger = null;
        try (LogCapture log = LogCapture.start()) {
            stranger = Vertx.builder().with(new VertxOptions().setEventBusOptions(new EventBusOptions()
                            .setHost("127.0.0.1").setPort(0).setClusterPublicHost("127.0.0.1")))
                    .withClusterManager(new HazelcastClusterManager(hz)).buildClustered()
                    .toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
            stranger.eventBus().registerCodec(new ControlCodec());
            String strangerNode = hz.getCluster().getLocalMember().getAttribute(ClusterNode.NODE_ID_ATTRIBUTE);
            ControlAddresses addresses = new ControlAddresses(job);
            DeliveryOptions plain = new DeliveryOptions().setCodecName(ControlCodec.NAME);
            WorkerInfo fake = new WorkerInfo(strangerNode, "127.0.0.1", 9, 0, 1, -1, 0, 0, 1);
            for (Kolo k : secured.workers) {
                String to = addresses.worker(k.nodeId());
                // A takeover, a new generation led by the stranger, a fake pending membership change...
                stranger.eventBus().send(to, new CoordinatorAnnounce(generation + 5, strangerNode), plain);
                stranger.eventBus().send(to, new Assignment(generation + 5, strangerNode, List.of(fake)), plain);
                stranger.eventBus().send(to, new MembershipPending(generation), plain);
                // ... fake results: every next response fails the op named "after-forgery" ...
                for (long seq = 0; seq < 300; seq++) {
                    stranger.eventBus().send(to, new OpResponse(generation, 0, seq, OpType.ALLREDUCE,
                            List.of(new ResponseEntry("after-forgery/sum", false, null, new long[0])),
                            ErrorKind.MISMATCH, "forged"), plain);
                }
                // ... and a body that is no control message at all.
                stranger.eventBus().send(to, "abort");
            }
            stranger.eventBus().send(addresses.coordinator(coordinator), new Hello(fake, 0), plain);

            log.await(l -> l.contains("WARN") && l.contains("control plane: dropped")
                    && l.contains("without an authentication tag"), 20);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (secured.workers.stream().anyMatch(k -> k.clusterNode().rejectedControlMessages() < 304)
                    && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            for (Kolo k : secured.workers) {
                assertTrue(k.clusterNode().rejectedControlMessages() >= 304, "rank " + k.rank() + " dropped only "
                        + k.clusterNode().rejectedControlMessages());
                assertEquals(generation, k.generation());
                assertEquals(coordinator, k.coordinatorNode());
                assertFalse(k.membershipChangePending());
            }
            assertTrue(log.lines(l -> l.contains("control plane: dropped")).size() <= 6,
                    "rate-limited: " + log.lines(l -> l.contains("control plane: dropped")));
            assertFalse(log.all().contains(SECRET));
            collectivesAreCorrect("after-forgery");
        } finally {
            if (stranger != null) {
                stranger.close().toCompletionStage().toCompletableFuture().get(20, TimeUnit.SECONDS);
            }
            hz.getLifecycleService().terminate();
        }
        // The stranger's departure is no loss to the job.
        collectivesAreCorrect("after-stranger-left");
    }

    @Test
    void theClusterNameCarriesATagOfTheSecret() {
        String name = ClusterNode.hazelcastConfig(config().build()).getClusterName();
        assertTrue(name.startsWith(job + "-") && !name.contains(SECRET), name);
        assertEquals(job, ClusterNode.hazelcastConfig(config().set(Settings.JOB_SECRET, null).build()).getClusterName());
        List<String> names = new ArrayList<>();
        for (Kolo k : secured.workers) {
            names.add(k.clusterNode().hazelcast().getConfig().getClusterName());
        }
        assertEquals(List.of(name, name), names);
    }
}
