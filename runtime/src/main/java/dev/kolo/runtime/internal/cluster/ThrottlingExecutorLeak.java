package dev.kolo.runtime.internal.cluster;

import io.vertx.spi.cluster.hazelcast.HazelcastClusterManager;
import java.lang.reflect.Field;
import java.util.concurrent.ExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Works around a leak of vertx-hazelcast 5.1: each cluster manager's subscription map starts a single-thread
 * executor ({@code Throttling}, thread {@code vertx-hazelcast-service-throttling-thread}) that its
 * {@code close()} waits for but never shuts down, so every closed worker leaves one thread behind. After
 * Vert.x has closed, this shuts that executor down. It reaches private fields by name: if a version of
 * vertx-hazelcast renames them, it logs that at DEBUG and does nothing (LifecycleTest then fails, saying so).
 */
final class ThrottlingExecutorLeak {
    private static final Logger LOG = LoggerFactory.getLogger(ThrottlingExecutorLeak.class);

    private ThrottlingExecutorLeak() {
    }

    static void shutDown(HazelcastClusterManager manager) {
        try {
            Object subscriptions = field(manager, "subsMapHelper");
            Object throttling = subscriptions == null ? null : field(subscriptions, "throttling");
            Object executor = throttling == null ? null : field(throttling, "executorService");
            if (executor instanceof ExecutorService e) {
                e.shutdownNow();
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.debug("cannot shut down vertx-hazelcast's throttling executor: {}", e.toString());
        }
    }

    private static Object field(Object owner, String name) throws ReflectiveOperationException {
        Field f = owner.getClass().getDeclaredField(name);
        f.setAccessible(true);
        return f.get(owner);
    }
}
