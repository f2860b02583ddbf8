package dev.kolo.samples.chaos;

import dev.kolo.checkpoint.CheckpointId;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/** Every checkpoint name that appeared in a directory while a scenario ran (retention may delete some). */
final class ChaosCheckpoints implements AutoCloseable {
    private final Path dir;
    private final Set<CheckpointId> seen = Collections.synchronizedSet(new TreeSet<>());
    private final Thread poller;
    private volatile boolean stop;

    ChaosCheckpoints(Path dir) {
        this.dir = dir;
        this.poller = new Thread(() -> {
            while (!stop) {
                poll();
                try {
                    Thread.sleep(50);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "chaos-checkpoint-watch");
        poller.setDaemon(true);
        poller.start();
    }

    private void poll() {
        try (Stream<Path> s = Files.list(dir)) {
            s.forEach(p -> CheckpointId.parse(p.getFileName().toString()).ifPresent(seen::add));
        } catch (IOException ignored) {
            // being written or deleted: the next poll sees it
        }
    }

    /**
     * One lineage: ordered by step, the generations never go back and no step was written twice; every
     * checkpoint newer than {@code genBefore} carries a generation the majority trained in.
     */
    String checkOneLineage(long genBefore, Set<Long> majorityGens) throws ChaosFailure {
        poll();
        List<CheckpointId> ids;
        synchronized (seen) {
            ids = new ArrayList<>(seen);
        }
        if (ids.isEmpty()) {
            throw new ChaosFailure("no checkpoint was written in " + dir);
        }
        CheckpointId prev = null;
        Set<Long> gens = new TreeSet<>();
        for (CheckpointId id : ids) { // sorted by step, then generation
            gens.add(id.generation());
            if (prev != null && (id.step() == prev.step() || id.generation() < prev.generation())) {
                throw new ChaosFailure("two checkpoint lineages: " + prev.name() + " then " + id.name()
                        + " (all seen: " + ids + ")");
            }
            if (id.generation() > genBefore && !majorityGens.contains(id.generation())
                    && !isLaterThanSplit(id, majorityGens)) {
                throw new ChaosFailure("checkpoint " + id.name() + " was written in generation "
                        + id.generation() + ", which the majority did not train in during the split "
                        + majorityGens);
            }
            prev = id;
        }
        return ids.size() + " checkpoints seen (steps " + ids.get(0).step() + ".." + ids.get(ids.size() - 1)
                .step() + ", gens " + gens + "): one lineage, steps strictly increasing, verify passed";
    }

    /** Generations formed after the heal (with the minority back) are newer than the split's. */
    private static boolean isLaterThanSplit(CheckpointId id, Set<Long> majorityGens) {
        return !majorityGens.isEmpty() && id.generation() > Collections.max(majorityGens);
    }

    @Override
    public void close() {
        stop = true;
        poller.interrupt();
    }
}
