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

/** A new worker's wait for its first assignment, which says what it waits for while it waits. */
final class Rendezvous {
    private static final Logger LOG = LoggerFactory.getLogger(WorkerBootstrap.LOGGER);
    /** How often a worker waiting outside a job at its maximum says that it still waits. */
    static final long WAITING_NOTICE_NANOS = TimeUnit.SECONDS.toNanos(30);
    /** How often the rendezvous looks at the coordinator's last answer while it waits for an assignment. */
    private static final long RENDEZVOUS_POLL_NANOS = TimeUnit.SECONDS.toNanos(1);

    private Rendezvous() {
    }

    /**
     * Waits for the first assignment. A worker that the coordinator tells to wait outside a job running at its
     * maximum waits up to {@code KOLO_ELASTIC_TIMEOUT} instead of the rendezvous timeout, says so once and then
     * every 30 s, and gives up at once if the job ends (it is alone in the cluster).
     *
     * @param deadline System.nanoTime() at which the rendezvous times out
     */
    static void await(WiredWorker worker, long deadline) {
        KoloConfig config = worker.config();
        CompletableFuture<Assignment> first = worker.verticle().firstAssignment().toCompletionStage()
                .toCompletableFuture();
        long start = System.nanoTime();
        long end = deadline;
        long waitingSince = 0;
        long nextNotice = 0;
        long nextProgress = start + WAITING_NOTICE_NANOS;
        while (true) {
            try {
                Deadlines.await(first, Math.min(end, System.nanoTime() + RENDEZVOUS_POLL_NANOS));
                return;
            } catch (Deadlines.KoloTimeout pollAgain) {
                // look at the coordinator's last answer below
            }
            long now = System.nanoTime();
            HelloReply reply = HelloReplies.last(worker.verticle());
            if (reply != null && reply.waiting()) {
                String why = reply.waitingReason();
                if (waitingSince == 0) {
                    waitingSince = now;
                    end = now + config.get(Settings.ELASTIC_TIMEOUT).toNanos();
                    nextNotice = now + WAITING_NOTICE_NANOS;
                    LOG.warn("waiting for a place: {}; gives up after {} s (KOLO_ELASTIC_TIMEOUT)", why,
                            config.get(Settings.ELASTIC_TIMEOUT).toSeconds());
                } else if (now >= nextNotice) {
                    nextNotice += WAITING_NOTICE_NANOS;
                    LOG.warn("still waiting for a place after {} s of at most {} s: {}",
                            TimeUnit.NANOSECONDS.toSeconds(now - waitingSince), config.get(Settings.ELASTIC_TIMEOUT).toSeconds(),
                            why);
                }
            }
            if (waitingSince == 0 && now >= nextProgress) {
                // A long rendezvous is not silent: who is here so far, how long, and the deadline.
                nextProgress += WAITING_NOTICE_NANOS;
                LOG.info("rendezvous of job '{}': {} of {} workers after {} s of at most {} s (KOLO_RENDEZVOUS_TIMEOUT)",
                        config.get(Settings.JOB), reply == null ? "no coordinator answer yet, so unknown" : reply.arrived().size(),
                        config.get(Settings.NP), TimeUnit.NANOSECONDS.toSeconds(now - start), config.get(Settings.RENDEZVOUS_TIMEOUT).toSeconds());
            }
            if (waitingSince != 0 && worker.clusterNode().memberAddresses().size() <= 1) {
                throw new KoloException("job '" + config.get(Settings.JOB) + "' ended while this worker waited for a place "
                        + "(it ran at its maximum, KOLO_MAX_NP=" + config.get(Settings.MAX_NP) + "): there is no job to join");
            }
            if (now >= end) {
                if (waitingSince != 0) {
                    throw new KoloException("no place freed in job '" + config.get(Settings.JOB) + "' within "
                            + config.get(Settings.ELASTIC_TIMEOUT).toSeconds() + " s (KOLO_ELASTIC_TIMEOUT): it runs at its "
                            + "maximum, KOLO_MAX_NP=" + config.get(Settings.MAX_NP) + "; raise KOLO_MAX_NP to run more workers, "
                            + "or stop this one");
                }
                throw new KoloException(RendezvousTimeout.message(config, worker.clusterNode(),
                        HelloReplies.last(worker.verticle())));
            }
        }
    }
}
