package dev.kolo.samples;

import dev.kolo.checkpoint.Checkpointer;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.samples.mnist.TrainingJob;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/**
 * One worker of a job: joins (or forms) the job's cluster, learns its rank, passes a control-plane barrier
 * with every other worker, trains the Fashion-MNIST sample with the others, and leaves. Its last line is
 * the summary {@code kolo: done rank=R size=N epochs=E test_accuracy=A checksum=HEX}.
 */
@Command(name = "worker.jar", description = "Runs one worker of a Kolo job: trains an MLP on Fashion-MNIST "
        + "data-parallel with the other workers (see 'launch' to start several local ones).",
        mixinStandardHelpOptions = true, versionProvider = WorkerCli.Version.class, sortOptions = false,
        usageHelpAutoWidth = true)
final class WorkerCommand implements Callable<Integer> {
    @Mixin
    ClusterOptions cluster = new ClusterOptions();

    @Mixin
    TrainingJob.Options training = new TrainingJob.Options();

    @Override
    public Integer call() {
        KoloConfig config = cluster.toConfig();
        TrainingJob job = training.toJob(defaultCheckpointDir());
        job.checkData(); // before joining: a missing data set is one line, not a failed job
        ParentWatch.startIfLaunched();
        String summary;
        try (Kolo kolo = Kolo.init(config)) {
            Runtime.getRuntime().addShutdownHook(new Thread(kolo::close, "kolo-leave"));
            System.out.printf("kolo: rank=%d size=%d local_rank=%d local_size=%d generation=%d coordinator=%d%n",
                    kolo.rank(), kolo.size(), kolo.localRank(), kolo.localSize(), kolo.generation(),
                    kolo.coordinatorRank());
            kolo.barrier();
            System.out.printf("kolo: barrier passed rank=%d size=%d%n", kolo.rank(), kolo.size());
            summary = job.run(kolo, System.out);
        }
        System.out.flush();
        // After leaving the cluster, so no log line of the shutdown follows it: the summary is the last line.
        System.out.println(summary);
        return 0;
    }

    private static Path defaultCheckpointDir() {
        return Checkpointer.Builder.defaultDirectory().orElse(null);
    }
}
