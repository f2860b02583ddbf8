package dev.kolo.samples.cli;

import dev.kolo.checkpoint.CheckpointSettings;
import dev.kolo.elastic.ElasticJobFailedException;
import dev.kolo.elastic.WorkerLeftException;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.KoloException;
import dev.kolo.samples.launch.KoloVersion;
import dev.kolo.samples.launch.ParentWatch;
import dev.kolo.samples.mnist.TrainingJob;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * One worker of a job: joins (or forms) the job's cluster, learns its rank, passes a control-plane barrier
 * with every other worker (fixed jobs), trains the Fashion-MNIST sample with the others, and leaves. Its last
 * line is the summary {@code kolo: done rank=R size=N epochs=E test_accuracy=A checksum=HEX}. Exit status: 0
 * when done or after leaving an elastic job on SIGTERM, 75 when a fixed job stopped on SIGTERM (any worker's) at a
 * step it checkpointed, 3 when the job cannot go on (a lost worker in a fixed job, too few workers in an elastic
 * one), 1 or 70 for other errors.
 */
@Command(name = "worker.jar", description = "Runs one worker of a Kolo job: trains an MLP on Fashion-MNIST "
        + "data-parallel with the other workers (see 'launch' to start several local ones).",
        mixinStandardHelpOptions = true, versionProvider = KoloVersion.class, sortOptions = false,
        usageHelpAutoWidth = true)
final class WorkerCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Mixin
    TrainingJob.Options training = new TrainingJob.Options();

    @Override
    public Integer call() {
        SettingFlags.apply(spec);
        KoloConfig config = KoloConfig.fromEnvironment();
        TrainingJob job = training.toJob(CheckpointSettings.CHECKPOINT_DIR.fromEnvironment().orElse(null));
        job.checkData(); // before joining: a missing data set is one line, not a failed job
        job.loadData();
        ParentWatch.startIfLaunched();
        Kolo kolo = Kolo.init(config);
        boolean elastic = config.elastic();
        int status = 1;
        try (WorkerShutdown shutdown = new WorkerShutdown(job::requestLeave, elastic, TrainingJob.LEAVE_TIMEOUT,
                System.err)) {
            try {
                System.out.printf("kolo: rank=%d size=%d local_rank=%d local_size=%d generation=%d coordinator=%d%n",
                        kolo.rank(), kolo.size(), kolo.localRank(), kolo.localSize(), kolo.generation(),
                        kolo.coordinatorRank());
                if (!elastic) {
                    // In an elastic job a worker may join a running generation, whose ranks are not at a barrier.
                    kolo.barrier();
                    System.out.printf("kolo: barrier passed rank=%d size=%d%n", kolo.rank(), kolo.size());
                }
                String summary = job.run(kolo, System.out);
                finishTogether(kolo);
                kolo.close();
                System.out.flush();
                // After leaving the cluster, so no log line of the shutdown follows it: the summary is the last line.
                System.out.println(summary);
                status = 0;
            } catch (WorkerLeftException e) {
                System.out.println("kolo: " + e.getMessage());
                status = 0;
            } catch (ElasticJobFailedException e) {
                // No graceful close: the cluster is broken, and leaving it could wait; exiting frees everything.
                System.err.println("kolo: " + e.getMessage());
                status = e.exitStatus();
            } finally {
                System.out.flush();
                shutdown.finished(status);
            }
        }
        return status;
    }

    /**
     * Waits until every rank has its result before leaving: a rank that left at once could make a slower one's
     * last collective fail (and an elastic job regroup for nothing).
     */
    private static void finishTogether(Kolo kolo) {
        try {
            kolo.barrier();
        } catch (KoloException e) {
            // a peer already left or failed: this worker has its result anyway
        }
    }
}
