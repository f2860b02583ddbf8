package dev.kolo.elastic;

import dev.kolo.runtime.ModuleSettings;
import dev.kolo.runtime.Setting;
import java.util.function.Function;

/**
 * The elastic module's settings, each declared once as a {@code public static final} {@link Setting} field. The
 * runtime's registry ({@link dev.kolo.runtime.Settings#all()}) finds this class through {@code META-INF/services},
 * so a worker's environment reader checks them, the worker has their flags and the README's table lists them;
 * this module reads them with {@link Setting#fromEnvironment()}. The sizes and the wait of an elastic job
 * ({@code KOLO_MIN_NP}, {@code KOLO_MAX_NP}, {@code KOLO_ELASTIC_TIMEOUT}) are the runtime's: it forms the
 * generations.
 */
public final class ElasticSettings implements ModuleSettings {
    public static final Setting<String> WORKER_ID = Setting.named("KOLO_WORKER_ID", Function.identity())
            .flag("--worker-id").byDefault(null, "the pod name on `kubernetes`, else host:pid")
            .accepts("a non-blank name", v -> !v.isBlank())
            .describe("stable identity of this worker across restarts (an elastic job blacklists by it)");

    /** For {@link java.util.ServiceLoader} only: the settings are the static fields. */
    public ElasticSettings() {
    }

    @Override
    public String module() {
        return "elastic";
    }
}
