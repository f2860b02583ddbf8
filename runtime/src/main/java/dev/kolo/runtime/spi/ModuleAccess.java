package dev.kolo.runtime.spi;

import com.hazelcast.core.HazelcastInstance;
import dev.kolo.runtime.Kolo;
import java.util.Objects;
import java.util.function.Function;

/**
 * A worker's cluster member, for Kolo's checkpoint and elastic modules (the in-memory checkpoint replica, the
 * elastic blacklist). {@link Kolo} hands over the accessor when its class initialises, so that the member
 * stays out of {@code Kolo}'s public methods; the accessor is set once and cannot be replaced.
 */
public final class ModuleAccess {
    private static volatile Function<Kolo, HazelcastInstance> hazelcast;

    private ModuleAccess() {
    }

    /**
     * Called once, by {@link Kolo}'s static initialiser.
     *
     * @throws IllegalStateException if the accessor is set already
     */
    public static synchronized void provideHazelcast(Function<Kolo, HazelcastInstance> accessor) {
        if (hazelcast != null) {
            throw new IllegalStateException("the cluster member accessor is set already");
        }
        hazelcast = Objects.requireNonNull(accessor);
    }

    /** @return the worker's Hazelcast member; Kolo owns its lifecycle */
    public static HazelcastInstance hazelcast(Kolo kolo) {
        // A Kolo instance exists, so its class has initialised and provided the accessor.
        return hazelcast.apply(Objects.requireNonNull(kolo, "kolo"));
    }
}
