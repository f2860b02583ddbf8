package dev.kolo.runtime.internal.cluster;

import dev.kolo.runtime.internal.negotiation.Negotiator;
import dev.kolo.runtime.internal.observability.KoloMetrics;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The coordinator's stall inspector: names the ranks that keep the others waiting for a tensor, and fails such ops
 * after the stall shutdown time ({@code KOLO_STALL_SHUTDOWN}). The warning comes first: at the stall warning time,
 * or at half the shutdown time if that is earlier. Apart from the coordinator, which decides when to inspect and
 * sends what the negotiations answer, because this is a concern of its own: timing, and what the user is told.
 */
final class StallInspector {
    private static final Logger LOG = LoggerFactory.getLogger(StallInspector.class);

    private final long warnAfterNanos;
    /** Zero: stalls are only warned of, never failed. */
    private final long shutdownNanos;
    private final long shutdownSeconds;
    private final KoloMetrics metrics;

    StallInspector(Duration warning, Duration shutdown, KoloMetrics metrics) {
        this.shutdownNanos = shutdown.toNanos();
        this.shutdownSeconds = shutdown.toSeconds();
        this.warnAfterNanos = shutdownNanos > 0 ? Math.min(warning.toNanos(), shutdownNanos / 2) : warning.toNanos();
        this.metrics = metrics;
    }

    /** @return how often to inspect: a quarter of the earlier of the warning and half the shutdown, 0.2 to 5 s */
    long inspectEveryMillis() {
        long shortest = warnAfterNanos / 1_000_000;
        return Math.max(200, Math.min(5000, shortest / 4));
    }

    /**
     * Warns of the stalls of one negotiation (once per warning interval per tensor) and, with a shutdown time,
     * fails those stalled that long.
     *
     * @return true when the negotiation may have responses to send: the failures of stalled ops
     */
    boolean inspect(SetNegotiation set) {
        Negotiator negotiator = set.negotiator;
        Map<String, Long> stallWarned = set.stallWarned;
        long now = System.nanoTime();
        for (Negotiator.Stall stall : negotiator.stalls(now, warnAfterNanos)) {
            Long last = stallWarned.get(stall.name());
            if (last == null || now - last >= warnAfterNanos) {
                stallWarned.put(stall.name(), now);
                metrics.stallWarning();
                LOG.warn("stall: {} has waited {} s for ranks {} to submit it (the other ranks are ready); "
                        + "a rank that skips a tensor, or runs a different step, keeps everyone waiting{}",
                        set.describe(stall.name()), String.format("%.1f", stall.seconds()),
                        set.scope.globalRanks(stall.missingRanks()),
                        shutdownNanos > 0 ? "; it fails on every rank after " + shutdownSeconds
                                + " s (KOLO_STALL_SHUTDOWN)" : "");
            }
        }
        stallWarned.keySet().removeIf(name -> negotiator.stalls(now, 0).stream().noneMatch(s -> s.name().equals(name)));
        if (shutdownNanos > 0) {
            negotiator.failStalled(now, shutdownNanos);
            return true;
        }
        return false;
    }

    /**
     * @return the tensors of {@code sets} waiting longer than {@code millis}, for the status page: which ranks they
     *         wait for, and how long
     */
    JsonArray waiting(Collection<SetNegotiation> sets, long millis) {
        JsonArray list = new JsonArray();
        for (SetNegotiation set : sets) {
            for (Negotiator.Stall stall : set.negotiator.stalls(System.nanoTime(), millis * 1_000_000)) {
                list.add(new JsonObject().put("tensor", set.scope.global() ? stall.name()
                                : "set " + set.scope.id() + "/" + stall.name())
                        .put("missingRanks", new JsonArray(set.scope.globalRanks(stall.missingRanks())))
                        .put("seconds", stall.seconds()));
            }
        }
        return list;
    }
}
