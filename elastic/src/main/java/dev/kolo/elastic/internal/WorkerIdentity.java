package dev.kolo.elastic.internal;

import dev.kolo.runtime.Discovery;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.Settings;
import java.util.Optional;

/**
 * The id a worker gives itself when the application names none: the blacklist counts a worker's failures
 * under it, so it should survive the worker's restarts where the platform allows.
 */
public final class WorkerIdentity {
    private WorkerIdentity() {
    }

    /**
     * @param configured the id set by {@code KOLO_WORKER_ID} (or its property), if any
     * @return {@code configured}; else, on Kubernetes, the pod name ({@code HOSTNAME}: a StatefulSet pod keeps
     *     its name across restarts); else {@code host:pid}, which a restart changes
     */
    public static String defaultId(Kolo kolo, Optional<String> configured) {
        if (configured.isPresent()) {
            return configured.get();
        }
        String host = System.getenv("HOSTNAME");
        if (kolo.config().get(Settings.DISCOVERY) == Discovery.KUBERNETES && host != null && !host.isBlank()) {
            return host.trim(); // a StatefulSet pod keeps its name across restarts
        }
        return kolo.config().get(Settings.HOST) + ":" + ProcessHandle.current().pid();
    }
}
