package dev.kolo.elastic;

import dev.kolo.elastic.data.StragglerPolicy;
import dev.kolo.runtime.ModuleSettings;
import dev.kolo.runtime.Setting;
import java.util.Locale;
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

    public static final Setting<StragglerPolicy> STRAGGLER = Setting.named("KOLO_STRAGGLER",
                    v -> StragglerPolicy.valueOf(v.toUpperCase(Locale.ROOT)))
            .flag("--straggler").byDefault(StragglerPolicy.WARN, "`warn`")
            .accepts("one of off, warn, rebalance, evict", v -> true)
            .describe("what a sampler's job does about a rank slower than the others (its busy time per sample over "
                    + "`KOLO_STRAGGLER_RATIO` times the median, for `KOLO_STRAGGLER_WINDOW` steps): `warn` names it "
                    + "in the log, on the status page and in a metric; `rebalance` also moves batch share to the "
                    + "faster ranks (the global batch and the update stay the same); `evict` (elastic jobs) lets a rank "
                    + "over `KOLO_STRAGGLER_EVICT_RATIO` leave at the next commit; `off` measures nothing");

    public static final Setting<Double> STRAGGLER_RATIO = Setting.named("KOLO_STRAGGLER_RATIO", Double::valueOf)
            .flag("--straggler-ratio").byDefault(1.3, "1.3")
            .accepts("a number above 1", v -> v > 1 && v < 1000)
            .describe("how much slower than the median rank (busy time per sample) a rank is before it counts as a "
                    + "straggler");

    public static final Setting<Integer> STRAGGLER_WINDOW = Setting.named("KOLO_STRAGGLER_WINDOW", Integer::valueOf)
            .flag("--straggler-window").byDefault(20, "20")
            .accepts("a whole number of steps from 3 to 100000", v -> v >= 3 && v <= 100_000)
            .describe("steps over which each rank's speed is measured (the median of its steps) before the ranks "
                    + "compare and the straggler policy acts");

    public static final Setting<Double> STRAGGLER_EVICT_RATIO = Setting.named("KOLO_STRAGGLER_EVICT_RATIO",
                    Double::valueOf)
            .flag("--straggler-evict-ratio").byDefault(2.0, "2")
            .accepts("a number above 1", v -> v > 1 && v < 1000)
            .describe("with `KOLO_STRAGGLER=evict`, how much slower than the median a rank is, over a whole window, "
                    + "before it leaves the job");

    /** For {@link java.util.ServiceLoader} only: the settings are the static fields. */
    public ElasticSettings() {
    }

    @Override
    public String module() {
        return "elastic";
    }
}
