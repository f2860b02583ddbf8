package dev.kolo.runtime.internal.cluster;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Settings;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.vertx.core.Handler;
import io.vertx.core.eventbus.DeliveryOptions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two real members of one cluster: one sends event-bus messages to the other without pause while the other
 * closes, as the last messages of a job meet a worker that leaves. Vert.x then reports the writes that the closed
 * connection failed a second time, as an exception on its own thread; the control plane's handler must know that
 * report (it goes to DEBUG) and see no other.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class UnhandledExceptionsTest {
    @Test
    void writesFailedByALeavingMemberAreKnownAndNothingElseIsUnhandled() throws Exception {
        String job = "unhandled-" + Long.toHexString(System.nanoTime());
        int port = 12000 + Settings.LOCAL_PORT_COUNT * (int) (ProcessHandle.current().pid() % 400);
        KoloConfig config = KoloConfig.builder().jobName(job).np(2).metricsPort(0).set(Settings.CLUSTER_PORT, port).build();
        ClusterNode sender = ClusterNode.start(config, new SimpleMeterRegistry(), null);
        ClusterNode leaving = ClusterNode.start(config, new SimpleMeterRegistry(), null);
        List<Throwable> unhandled = new CopyOnWriteArrayList<>();
        AtomicBoolean sending = new AtomicBoolean(true);
        try {
            Handler<Throwable> product = sender.vertx().exceptionHandler();
            assertNotNull(product, "the control plane's Vert.x has no handler for unhandled exceptions");
            sender.vertx().exceptionHandler(t -> {
                unhandled.add(t);
                product.handle(t);
            });
            String address = "kolo." + job + ".test.sink";
            CountDownLatch reached = new CountDownLatch(1);
            AtomicLong received = new AtomicLong();
            leaving.vertx().eventBus().consumer(address, m -> {
                reached.countDown();
                received.incrementAndGet();
            }).completion()
                    .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            DeliveryOptions options = new DeliveryOptions();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!reached.await(100, TimeUnit.MILLISECONDS)) {
                // The consumer's registration reaches the sender's view of the cluster after a moment.
                assertTrue(System.nanoTime() < deadline, "the second member's consumer was never reached");
                sender.vertx().eventBus().send(address, "hello", options);
            }
            // Messages of 1 MiB, up to 64 of them on their way: the close meets writes still in the connection's
            // buffers, as a job's last messages meet a worker that leaves.
            long before = received.get();
            AtomicLong sent = new AtomicLong(before);
            Thread flood = new Thread(() -> {
                byte[] body = new byte[1024 * 1024];
                while (sending.get()) {
                    if (sent.get() - received.get() < 64) {
                        sender.vertx().eventBus().send(address, body, options);
                        sent.incrementAndGet();
                    } else {
                        Thread.onSpinWait();
                    }
                }
            }, "flood");
            flood.start();
            while (received.get() < before + 64) {
                assertTrue(System.nanoTime() < deadline + TimeUnit.SECONDS.toNanos(30), "the flood never arrived");
                Thread.sleep(10);
            }
            leaving.close(Duration.ofSeconds(20));
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (unhandled.isEmpty() && System.nanoTime() < until) {
                Thread.sleep(50);
            }
            sending.set(false);
            flood.join(10_000);
        } finally {
            sending.set(false);
            sender.close(Duration.ofSeconds(20));
            leaving.close(Duration.ofSeconds(20));
        }
        assertFalse(unhandled.isEmpty(), "no write failed twice: if Vert.x no longer reports a failed event-bus "
                + "write a second time, UnhandledExceptions' special case (and this test) can go");
        for (Throwable t : unhandled) {
            assertTrue(UnhandledExceptions.isFailedWriteReportedTwice(t), "not known as a failed write: " + t);
        }
    }
}
