package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * SIGKILL one of three processes in the middle of its work: the survivors get WorkerLostException within 10 s,
 * both during 64 MiB allreduces and during steady steps of many small tensors agreed in the ranks' own rounds.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class WorkerKilledMidAllreduceTest {
    private final List<Process> processes = new ArrayList<>();

    @AfterEach
    void stop() {
        processes.forEach(Process::destroyForcibly);
    }

    @Test
    void survivorsFailFastInsteadOfHanging() throws Exception {
        killOneOfThree(AllreduceLoopWorker.class, 2);
    }

    @Test
    void survivorsOfASteadyStepFailFastToo() throws Exception {
        killOneOfThree(SteadyStepWorker.class, 5);
    }

    private void killOneOfThree(Class<?> worker, int iterationsFirst) throws Exception {
        String job = LocalJob.uniqueName("kill");
        int ports = LocalJob.freshPortRange();
        BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        for (int i = 0; i < 3; i++) {
            processes.add(start(worker, job, ports, i, lines));
        }
        Map<Integer, Integer> iterations = new HashMap<>();
        Map<Integer, Integer> rankOf = new HashMap<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
        while (iterations.size() < 3 || iterations.values().stream().anyMatch(v -> v < iterationsFirst)) {
            String line = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            assertNotNull(line, "workers did not all run allreduces in time: " + iterations);
            int index = Integer.parseInt(line.substring(1, line.indexOf(']')));
            if (line.contains("loop iteration=")) {
                iterations.put(index, Integer.parseInt(line.replaceAll(".*iteration=(\\d+).*", "$1")));
                rankOf.put(index, Integer.parseInt(line.replaceAll(".*rank=(\\d+).*", "$1")));
            }
        }
        int victim = 1;
        Thread.sleep(37); // land somewhere inside an op
        long killedAt = System.currentTimeMillis();
        processes.get(victim).destroyForcibly(); // SIGKILL
        List<Long> detectMillis = new ArrayList<>();
        while (detectMillis.size() < 2) {
            long left = killedAt + 10_000 - System.currentTimeMillis();
            String line = lines.poll(Math.max(1, left), TimeUnit.MILLISECONDS);
            assertNotNull(line, "survivors did not report the loss within 10 s: " + detectMillis);
            if (line.contains("loop lost")) {
                int index = Integer.parseInt(line.substring(1, line.indexOf(']')));
                assertTrue(index != victim);
                detectMillis.add(Long.parseLong(line.replaceAll(".*at=(\\d+).*", "$1")) - killedAt);
                assertTrue(line.contains("rank " + rankOf.get(victim)) || line.contains("rank"), line);
            }
        }
        for (int i = 0; i < 3; i++) {
            if (i != victim) {
                assertTrue(processes.get(i).waitFor(10, TimeUnit.SECONDS));
                assertEquals(3, processes.get(i).exitValue());
            }
        }
        System.out.println("survivors saw WorkerLostException " + detectMillis + " ms after SIGKILL");
    }

    private static Process start(Class<?> worker, String job, int ports, int index, BlockingQueue<String> lines)
            throws Exception {
        return ChildWorker.start(worker, java.util.Map.of("KOLO_JOB", job, "KOLO_NP", "3",
                "KOLO_CLUSTER_PORT", Integer.toString(ports), "KOLO_RENDEZVOUS_TIMEOUT", "150"), index, lines);
    }
}
