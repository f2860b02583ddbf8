package dev.kolo.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.elastic.ElasticJobFailedException;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A fixed job preempted: one worker of two {@code worker.jar} processes gets SIGTERM mid-training (as a Kueue
 * preemption, a node drain or the cluster autoscaler sends it, with a grace period). The job stops at a step
 * boundary with that step checkpointed, every worker exits with the status the manifests' failure policies count as
 * a disruption, and the two started again resume from that very step: the step it resumes at against the step it
 * was at when the signal came. Checkpoints are due every 500 steps only, so without the stop's checkpoint the restart
 * would begin again at step 0.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class FixedJobSigtermIT {
    /** Rank 0's per-step line with {@code --log-every 1}: within the one epoch, the step is the job's. */
    private static final Pattern STEP_LINE = Pattern.compile("epoch 1 step (\\d+)/\\d+ .*");
    private static final Pattern STOPPED = Pattern.compile("kolo: stopped at step=(\\d+)");
    private static final Pattern RESUMED = Pattern.compile("train: resuming at step (\\d+) .*");
    /** Where the signal is sent: not a multiple of --commit-every, far from a due checkpoint. */
    private static final int SIGNAL_AFTER = 37;

    @Test
    void aSigtermedFixedJobStopsAtACheckpointedStepAndResumesThereLosingNoStep(@TempDir Path dir) throws Exception {
        String job = "sigterm-" + UUID.randomUUID().toString().substring(0, 8);
        int[] ports = {freePort(), freePort()};
        List<String> training = List.of("--np", "2", "--epochs", "1", "--batch-size", "32", "--commit-every", "10",
                "--checkpoint-every", "500", "--log-every", "1", "--checkpoint-dir", dir.toString());
        long signalStep;
        long stoppedAt;
        try (WorkerProcess w0 = start(job, ports, 0, training); WorkerProcess w1 = start(job, ports, 1, training)) {
            WorkerProcess rank0 = rankZero(w0, w1);
            WorkerProcess other = rank0 == w0 ? w1 : w0;
            rank0.awaitLine(l -> stepOf(l) >= SIGNAL_AFTER, 120);
            // The other worker is signalled: rank 0, which writes checkpoints, hears of it only from the agreement.
            signalStep = lastStep(rank0); // steps done by the time of the signal: at least these
            // SIGTERM, through the handle: Process.destroy() would also close this side of the worker's output.
            assertTrue(other.process.toHandle().destroy(), "SIGTERM sent");
            for (WorkerProcess p : List.of(w0, w1)) {
                assertEquals(ElasticJobFailedException.STOPPED_STATUS, p.exitCode(60), p.transcript());
            }
            assertTrue(String.join("\n", other.err).contains("kolo: shutting down: stopping the job at the next step"),
                    "signalled:\n" + other.transcript() + "\nrank 0:\n" + rank0.transcript());
            stoppedAt = stoppedStep(rank0);
            assertEquals(stoppedAt, stoppedStep(other), "both stop at the same step\n" + other.transcript());
            String why = String.join("\n", rank0.err);
            assertTrue(why.contains("stopped as asked") && why.contains("resume from this step"), rank0.transcript());
            assertTrue(stoppedAt >= signalStep && stoppedAt <= signalStep + 20, "stopped at step " + stoppedAt
                    + ", signalled at step " + signalStep + "\n" + rank0.transcript());
        }
        List<String> resume = new ArrayList<>(training);
        resume.addAll(List.of("--max-steps", Long.toString(stoppedAt + 10)));
        try (WorkerProcess w0 = start(job, ports, 0, resume); WorkerProcess w1 = start(job, ports, 1, resume)) {
            for (WorkerProcess p : List.of(w0, w1)) {
                assertEquals(0, p.exitCode(120), p.transcript());
            }
            WorkerProcess rank0 = rankZero(w0, w1);
            Matcher resumed = RESUMED.matcher(rank0.lines(l -> RESUMED.matcher(l).matches()).stream().findFirst()
                    .orElseThrow(() -> new AssertionError("no resume line\n" + rank0.transcript())));
            assertTrue(resumed.matches());
            long resumedAt = Long.parseLong(resumed.group(1));
            long lost = signalStep - resumedAt;
            System.out.printf(Locale.ROOT, "FixedJobSigtermIT: signalled at step %d, stopped at step %d, resumed at "
                    + "step %d: %d steps lost%n", signalStep, stoppedAt, resumedAt, Math.max(0, lost));
            assertEquals(stoppedAt, resumedAt, "the restart resumes from the step the stop checkpointed");
            assertTrue(lost <= 1, "at most one step lost: signalled at " + signalStep + ", resumed at " + resumedAt);
        }
    }

    /** Per test run; with the job name appended, each job has its own secret. */
    private static final String SECRET = UUID.randomUUID() + "-";

    private static WorkerProcess start(String job, int[] ports, int i, List<String> training) throws IOException {
        String members = "127.0.0.1:" + ports[0] + ",127.0.0.1:" + ports[1];
        List<String> args = new ArrayList<>(List.of("--job", job, "--discovery", "members", "--members", members,
                "--host", "127.0.0.1", "--cluster-port", Integer.toString(ports[i]), "--metrics-port", "0",
                "--heartbeat-timeout", "3", "--rendezvous-timeout", "60"));
        args.addAll(training);
        return WorkerProcess.start(List.of(), Map.of("KOLO_JOB_SECRET", SECRET + job), args);
    }

    private static WorkerProcess rankZero(WorkerProcess a, WorkerProcess b) throws InterruptedException {
        String line = a.awaitLine(l -> l.startsWith("kolo: rank="), 90);
        return line.startsWith("kolo: rank=0 ") ? a : b;
    }

    private static long stepOf(String line) {
        Matcher m = STEP_LINE.matcher(line);
        return m.matches() ? Long.parseLong(m.group(1)) : -1;
    }

    /** @return the highest step rank 0 has reported so far */
    private static long lastStep(WorkerProcess rank0) {
        return rank0.lines(l -> stepOf(l) >= 0).stream().mapToLong(FixedJobSigtermIT::stepOf).max().orElseThrow();
    }

    private static long stoppedStep(WorkerProcess p) {
        List<String> l = p.lines(x -> STOPPED.matcher(x).matches());
        assertEquals(1, l.size(), "one stop line\n" + p.transcript());
        Matcher m = STOPPED.matcher(l.get(0));
        assertTrue(m.matches());
        return Long.parseLong(m.group(1));
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
