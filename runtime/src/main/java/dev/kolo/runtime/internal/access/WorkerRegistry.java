package dev.kolo.runtime.internal.access;

import java.util.Collections;
import java.util.Map;
import java.util.Objects;
import java.util.WeakHashMap;

/**
 * Finds the wired worker behind a {@code Kolo} facade. The facade is taken as an {@code Object} so that this
 * class never imports it. Keys are held weakly: an entry lives as long as its facade, so a closed worker still
 * answers (as it did when the facade handed out its member itself) and a dropped one is forgotten. The facade
 * class is final and keeps {@code Object}'s equality, so a key is found by identity.
 */
public final class WorkerRegistry {
    private static final Map<Object, WorkerInternals> BY_FACADE = Collections.synchronizedMap(new WeakHashMap<>());

    private WorkerRegistry() {
    }

    /**
     * Records {@code worker} as the internals of {@code facade}; called once per facade, when it is made.
     *
     * @throws IllegalStateException if {@code facade} has internals already: they are never replaced
     */
    public static void register(Object facade, WorkerInternals worker) {
        Objects.requireNonNull(facade, "facade");
        Objects.requireNonNull(worker, "worker");
        if (BY_FACADE.putIfAbsent(facade, worker) != null) {
            throw new IllegalStateException("this Kolo has its worker already");
        }
    }

    /**
     * @return the internals of {@code facade}
     * @throws IllegalArgumentException if {@code facade} is no registered worker's facade
     */
    public static WorkerInternals of(Object facade) {
        WorkerInternals worker = BY_FACADE.get(Objects.requireNonNull(facade, "kolo"));
        if (worker == null) {
            throw new IllegalArgumentException("not a Kolo worker: " + facade);
        }
        return worker;
    }
}
