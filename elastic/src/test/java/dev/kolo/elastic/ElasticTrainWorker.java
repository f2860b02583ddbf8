package dev.kolo.elastic;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A worker process for the multi-process tests: trains {@link TrainModel} under {@link Elastic#runOrExit},
 * committing every {@code commitEvery} steps. Prints (prefix {@code ew }):
 * {@code ready}, {@code step}, {@code reset}, {@code done} lines with rank, size, generation, checksums,
 * thread and file-descriptor counts (with {@code ew.pauseAt}, also {@code submitting} before each gradient allreduce
 * and {@code paused}). Settings are system properties {@code ew.*}. Ends itself when its
 * standard input closes (the test died).
 */
public final class ElasticTrainWorker {
    private ElasticTrainWorker() {
    }

    public static void main(String[] args) {
        Thread stdinWatch = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // the test closes stdin (or dies) to stop us
                }
            } catch (java.io.IOException ignored) {
                // parent gone
            }
            Runtime.getRuntime().halt(9);
        }, "stdin-watch");
        stdinWatch.setDaemon(true);
        stdinWatch.start();
        int dim = Integer.getInteger("ew.dim", 1 << 20);
        long steps = Long.getLong("ew.steps", 40);
        int commitEvery = Integer.getInteger("ew.commitEvery", 2);
        int checkpointEvery = Integer.getInteger("ew.checkpointEvery", 5);
        long sleepMs = Long.getLong("ew.sleepMs", 20);
        String stopFile = System.getProperty("ew.stopFile");
        // "STEP@RANK": the rank stops before it submits that step's gradient allreduce in the first generation (the
        // others wait inside theirs), says so, and waits to be killed; every rank says when it submits one.
        String pauseAt = System.getProperty("ew.pauseAt");
        Kolo kolo = Kolo.init();
        TrainModel m = new TrainModel(dim);
        float[] g = new float[dim];
        ByteBuffer gradBuf = ByteBuffer.allocateDirect(dim * 4).order(ByteOrder.LITTLE_ENDIAN);
        Tensor grad = Tensor.wrap(dev.kolo.runtime.DType.FLOAT32, gradBuf, dim);
        ElasticState state = ElasticState.builder(kolo).checkpointEvery(checkpointEvery).build();
        state.floats("w", m.w).floats("v", m.v).value("step", 0L).value("end", steps).value("note", "ew");
        state.onReset(e -> System.out.println("ew reset reason=" + e.reason() + " size=" + e.size() + " prev="
                + e.previousSize() + " rank=" + e.rank() + " gen=" + e.generation() + " commit=" + e.commit()
                + " rolledBack=" + e.rolledBack() + " checksum=" + m.checksum() + " threads=" + Thread.activeCount()
                + " fds=" + openFiles() + " pools=" + threadPools() + " t=" + System.currentTimeMillis()));
        System.out.println("ew ready rank=" + kolo.rank() + " size=" + kolo.size() + " gen=" + kolo.generation()
                + " coordinator=" + kolo.coordinatorRank() + " pid=" + ProcessHandle.current().pid() + " page="
                + kolo.statusUrl() + " job=" + kolo.jobStatusUrl());
        String checksum = Elastic.runOrExit(kolo, state, s -> {
            System.out.println("ew start rank=" + kolo.rank() + " size=" + kolo.size() + " gen=" + kolo.generation()
                    + " step=" + s.longValue("step") + " checksum=" + m.checksum());
            for (long step = s.longValue("step"); step < s.longValue("end"); step++) {
                m.localGradient(step, kolo.rank(), kolo.size(), g);
                gradBuf.clear();
                gradBuf.asFloatBuffer().put(g);
                if (pauseAt != null) {
                    if (pauseAt.equals((step + 1) + "@" + kolo.rank()) && kolo.generation() == 1) {
                        System.out.println("ew paused step=" + (step + 1) + " rank=" + kolo.rank());
                        sleep(Long.MAX_VALUE);
                    }
                    System.out.println("ew submitting step=" + (step + 1) + " rank=" + kolo.rank() + " gen="
                            + kolo.generation());
                }
                kolo.allreduceInPlace("grad", grad, ReduceOp.SUM);
                gradBuf.clear();
                gradBuf.asFloatBuffer().get(g);
                m.apply(g);
                s.set("step", step + 1);
                kolo.reportStep(step + 1, 1);
                System.out.println("ew step=" + (step + 1) + " rank=" + kolo.rank() + " size=" + kolo.size() + " gen="
                        + kolo.generation() + " t=" + System.currentTimeMillis());
                if ((step + 1) % commitEvery == 0) {
                    if (stopFile != null && s.longValue("end") == steps) {
                        // The test asks to finish: ranks agree on it (they see the file at different moments).
                        int seen = Files.exists(Path.of(stopFile)) ? 1 : 0;
                        if (kolo.allreduce("stop", Tensor.of(new int[] {seen}, 1), ReduceOp.MAX).toIntArray()[0] == 1) {
                            s.set("end", step + 1 + 2L * commitEvery);
                        }
                    }
                    s.commit();
                }
                sleep(sleepMs);
            }
            return m.checksum();
        });
        System.out.println("ew done rank=" + kolo.rank() + " size=" + kolo.size() + " gen=" + kolo.generation()
                + " steps=" + state.longValue("end") + " checksum=" + checksum + " probe=" + m.probe() + " saved=" + state.checkpointsSaved());
        System.out.flush();
        try {
            kolo.barrier();
        } catch (RuntimeException e) {
            // a peer finished and left first: we are done anyway
        }
        state.close();
        kolo.close();
        System.exit(0);
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Live threads grouped by name with the numbers masked ({@code hz.x.cached.thread-#:3,...}): a leak shows as
     * one group growing every round, a pool warming up as a group that stops at its bound.
     */
    private static String threadPools() {
        java.util.Map<String, Integer> byPool = new java.util.TreeMap<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            byPool.merge(t.getName().replaceAll("[0-9]+", "#").replace(' ', '_').replace(',', '_'), 1, Integer::sum);
        }
        StringBuilder s = new StringBuilder();
        byPool.forEach((name, n) -> s.append(s.length() == 0 ? "" : ",").append(name).append(':').append(n));
        return s.toString();
    }

    private static long openFiles() {
        try (var s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        } catch (Exception e) {
            return -1;
        }
    }
}
