package dev.kolo.runtime.internal.bootstrap;

import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.KoloException;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.ControlMessage.HelloReply;
import dev.kolo.runtime.internal.engine.op.Deadlines;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** An elastic worker's wait for a new generation that includes it, which says every 30 s what it waits for. */
final class Regroup {
    private static final Logger LOG = LoggerFactory.getLogger(WorkerBootstrap.LOGGER);

    private Regroup() {
    }

    /**
     * Leaves the current generation and waits for the next assignment.
     *
     * @throws KoloException if the job is not elastic, if this worker is refused, or if no new generation
     *                       forms within {@code KOLO_ELASTIC_TIMEOUT}
     */
    static void await(WiredWorker worker) {
        KoloConfig config = worker.config();
        if (!config.elastic()) {
            throw new KoloException("rejoin needs an elastic job: set KOLO_MIN_NP below KOLO_MAX_NP (this job has "
                    + "np=" + config.get(Settings.NP) + " fixed)");
        }
        long start = System.nanoTime();
        long deadline = start + config.get(Settings.ELASTIC_TIMEOUT).toNanos();
        long nextNotice = start + Rendezvous.WAITING_NOTICE_NANOS;
        CompletableFuture<Assignment> next = worker.verticle().rejoin().toCompletionStage().toCompletableFuture();
        while (true) {
            try {
                Deadlines.await(next, Math.min(deadline, nextNotice));
                break;
            } catch (Deadlines.KoloTimeout e) {
                HelloReply reply = HelloReplies.last(worker.verticle());
                String present = reply == null ? "no coordinator answered"
                        : reply.arrived().size() + " workers present (" + String.join(", ", reply.arrived()) + ")";
                String needs = "a new generation needs at least KOLO_MIN_NP=" + config.get(Settings.MIN_NP)
                        + " workers and a strict majority of the last one's " + worker.lastSize();
                long now = System.nanoTime();
                if (now >= deadline) {
                    throw new KoloException("no new generation formed within " + config.get(Settings.ELASTIC_TIMEOUT).toSeconds()
                            + " s (KOLO_ELASTIC_TIMEOUT): " + present + "; " + needs + "; start more workers");
                }
                nextNotice += Rendezvous.WAITING_NOTICE_NANOS;
                LOG.warn("waiting for a new generation for {} s of at most {} s (KOLO_ELASTIC_TIMEOUT): {}; {}",
                        TimeUnit.NANOSECONDS.toSeconds(now - start), config.get(Settings.ELASTIC_TIMEOUT).toSeconds(), present,
                        needs);
            }
        }
    }
}
