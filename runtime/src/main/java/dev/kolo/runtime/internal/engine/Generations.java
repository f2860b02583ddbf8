package dev.kolo.runtime.internal.engine;

import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.internal.autotune.Autotuner;
import dev.kolo.runtime.internal.autotune.TunedValues;
import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.SetScope;
import dev.kolo.runtime.internal.control.WorkerInfo;
import dev.kolo.runtime.internal.engine.agree.Completion;
import dev.kolo.runtime.internal.engine.agree.RankGeneration;
import dev.kolo.runtime.internal.engine.agree.RoundMessage;
import dev.kolo.runtime.internal.engine.agree.Tuning;
import dev.kolo.runtime.internal.observability.Observability;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Wires each generation's stages for one client: a {@link RankGeneration} handed the job's settings, the way to
 * the coordinator and its {@link Tuning} (the settings on every rank; on rank 0 of a job with
 * {@code KOLO_AUTOTUNE} also the tuner, kept across generations so that its search goes on after a regroup). The
 * generation makes its agreement round and its executor from these when its data plane opens; none of them sees
 * the client.
 */
final class Generations {
    private final ControlChannel node;
    private final SetScope scope;
    private final Observability observability;
    /** The coordinator's cycle time as tuned (the worker's client only: the coordinator of this worker reads it). */
    private final AtomicLong cycleNanos = new AtomicLong();
    /** Rank 0's tuner with {@code KOLO_AUTOTUNE}, made the first time this worker is rank 0; kept across generations. */
    private volatile Autotuner tuner;
    /** The tuned values each generation took, and at which round (for tests and logs). */
    private final List<String> tuningHistory = new ArrayList<>();

    Generations(ControlChannel node, SetScope scope, Observability observability) {
        this.node = node;
        this.scope = scope;
        this.observability = observability;
        this.cycleNanos.set(node.config().get(Settings.CYCLE_TIME).toNanos());
    }

    /** @return generation {@code a} as this rank ({@code self}) runs it, its outcomes going to {@code completion} */
    RankGeneration generation(Assignment a, WorkerInfo self, Completion completion) {
        return new RankGeneration(a, scope, self, node.config(), node::sendToCoordinator, observability, completion,
                tuning(a, self));
    }

    /**
     * The tuned knobs of a new generation: the job's settings on every rank, and on rank 0 of a job with
     * {@code KOLO_AUTOTUNE} the tuner, which proposes its next values in the first round (a process set runs with
     * the settings).
     */
    private Tuning tuning(Assignment a, WorkerInfo self) {
        KoloConfig config = node.config();
        int size = a.workers().size();
        TunedValues settings = new TunedValues(config.get(Settings.FUSION_THRESHOLD).intValue(), RoundMessage.eagerOpBytes(size),
                (int) (config.get(Settings.CYCLE_TIME).toNanos() / 1000));
        if (!scope.global()) {
            return new Tuning(settings, null, null, null);
        }
        if (tuner == null && config.get(Settings.AUTOTUNE) && self.rank() == 0 && size > 1) {
            String log = config.get(Settings.AUTOTUNE_LOG);
            tuner = new Autotuner(settings, log == null || log.isBlank() ? null : java.nio.file.Path.of(log));
        }
        return new Tuning(settings, self.rank() == 0 ? tuner : null, cycleNanos, tuningHistory);
    }

    /** @return the coordinator's cycle time in force (tuned, or the setting) */
    long cycleTimeNanos() {
        return cycleNanos.get();
    }

    /** @return whether this worker's tuner has finished its search (false when it has none) */
    boolean tuningDone() {
        Autotuner t = tuner;
        return t != null && t.done();
    }

    /** @return the tuned values each generation took on this rank, and at which agreement round */
    List<String> tuningHistory() {
        return Tuning.copy(tuningHistory);
    }

    /** The client closes: the tuner's log is closed. */
    void close() {
        if (tuner != null) {
            tuner.close();
        }
    }
}
