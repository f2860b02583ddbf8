package dev.kolo.checkpoint;

import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Names one checkpoint: the training step it holds and the generation (membership epoch of the elastic
 * job) of the writer that produced it. Checkpoints are ordered by step, then generation, so the newest
 * is the largest; the generation also tells a checkpoint written by a fenced, older-generation writer
 * apart from the current generation's.
 *
 * <p>The name is {@code ckpt-s<step, 12+ digits>-g<generation>}, e.g. {@code ckpt-s000000001200-g3}:
 * the directory name on disk and the key prefix in the cluster replica.
 *
 * @param step the training step, {@code >= 0}
 * @param generation the writer's generation, {@code >= 0}
 */
public record CheckpointId(long step, long generation) implements Comparable<CheckpointId> {
    private static final Pattern NAME = Pattern.compile("ckpt-s(\\d{1,19})-g(\\d{1,19})");

    /** @throws IllegalArgumentException if step or generation is negative */
    public CheckpointId {
        if (step < 0) {
            throw new IllegalArgumentException("checkpoint step must be >= 0, got " + step);
        }
        if (generation < 0) {
            throw new IllegalArgumentException("checkpoint generation must be >= 0, got " + generation);
        }
    }

    /** @return the canonical name, e.g. {@code ckpt-s000000001200-g3} */
    public String name() {
        return String.format("ckpt-s%012d-g%d", step, generation);
    }

    /** @return the id named by {@code name}, or empty if it is not a checkpoint name */
    public static Optional<CheckpointId> parse(String name) {
        Matcher m = NAME.matcher(name);
        if (!m.matches()) {
            return Optional.empty();
        }
        try {
            CheckpointId id = new CheckpointId(Long.parseLong(m.group(1)), Long.parseLong(m.group(2)));
            // Only the canonical spelling counts, so a name maps to exactly one id and back.
            return id.name().equals(name) ? Optional.of(id) : Optional.empty();
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    @Override
    public int compareTo(CheckpointId o) {
        int c = Long.compare(step, o.step);
        return c != 0 ? c : Long.compare(generation, o.generation);
    }

    @Override
    public String toString() {
        return name();
    }
}
