package dev.kolo.runtime.spi;

import com.hazelcast.core.HazelcastInstance;
import dev.kolo.runtime.Kolo;
import java.util.List;
import java.util.Objects;

/**
 * What Kolo's checkpoint and elastic modules need of a worker beyond the public API: its cluster member (the
 * in-memory checkpoint replica, the elastic blacklist) and the workers the cluster saw leave (the stop
 * message of a fixed job). {@link Kolo} hands over the accessor when its class initialises, so that these stay
 * out of {@code Kolo}'s public methods; the accessor is set once and cannot be replaced.
 */
public final class ModuleAccess {
    private static volatile Accessor accessor;

    private ModuleAccess() {
    }

    /** What {@link Kolo} provides. */
    public interface Accessor {
        /** @return the worker's Hazelcast member */
        HazelcastInstance hazelcast(Kolo kolo);

        /** @return workers of the current generation that left the cluster, first to go first */
        List<Departure> departed(Kolo kolo);
    }

    /**
     * A worker of the current generation that left the cluster.
     *
     * @param rank its rank in that generation
     * @param host its host
     */
    public record Departure(int rank, String host) {
    }

    /**
     * Called once, by {@link Kolo}'s static initialiser.
     *
     * @throws IllegalStateException if the accessor is set already
     */
    public static synchronized void provide(Accessor a) {
        if (accessor != null) {
            throw new IllegalStateException("the module accessor is set already");
        }
        accessor = Objects.requireNonNull(a);
    }

    /** @return the worker's Hazelcast member; Kolo owns its lifecycle */
    public static HazelcastInstance hazelcast(Kolo kolo) {
        // A Kolo instance exists, so its class has initialised and provided the accessor.
        return accessor.hazelcast(Objects.requireNonNull(kolo, "kolo"));
    }

    /**
     * @return workers of the current generation that the cluster saw leave, first to go first (empty until the
     *         cluster notices a loss: a killed worker within the heartbeat timeout)
     */
    public static List<Departure> departed(Kolo kolo) {
        return accessor.departed(Objects.requireNonNull(kolo, "kolo"));
    }
}
