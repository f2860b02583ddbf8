package dev.kolo.checkpoint;

import dev.kolo.checkpoint.internal.format.Json;
import dev.kolo.runtime.Tensor;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * The training state one checkpoint holds: named tensors (parameters, optimizer moments, ...), named
 * scalar values ({@code long}, {@code double} or {@code String}: learning rate, RNG seed, data-loader
 * position, ...), a user metadata JSON document, and the position of the job (step, epoch, generation,
 * world size). Immutable once built; the tensors themselves are referenced, not copied, until a save
 * snapshots them.
 *
 * <pre>{@code
 * CheckpointState state = CheckpointState.builder(step)
 *         .epoch(epoch).generation(kolo.generation()).worldSize(kolo.size())
 *         .tensor("fc1.weight", w1).tensor("fc1.bias", b1)
 *         .scalar("lr", 0.01).scalar("seed", 42L)
 *         .metadataJson("{\"model\":\"mlp\"}")
 *         .build();
 * }</pre>
 */
public final class CheckpointState {
    private final long step;
    private final long epoch;
    private final long generation;
    private final int worldSize;
    private final Map<String, Tensor> tensors;
    private final Map<String, Object> scalars;
    private final String metadataJson;

    private CheckpointState(Builder b) {
        this.step = b.step;
        this.epoch = b.epoch;
        this.generation = b.generation;
        this.worldSize = b.worldSize;
        this.tensors = Collections.unmodifiableMap(new LinkedHashMap<>(b.tensors));
        this.scalars = Collections.unmodifiableMap(new LinkedHashMap<>(b.scalars));
        this.metadataJson = b.metadataJson;
    }

    /**
     * @param step the training step this state belongs to ({@code >= 0}); with the generation it names
     *     the checkpoint
     * @return a builder; epoch and generation default to 0, world size to 1, metadata to {@code {}}
     */
    public static Builder builder(long step) {
        return new Builder(step);
    }

    /** @return the training step */
    public long step() {
        return step;
    }

    /** @return the epoch */
    public long epoch() {
        return epoch;
    }

    /** @return the generation of the writer (see {@link CheckpointId}) */
    public long generation() {
        return generation;
    }

    /** @return the number of workers when the state was saved */
    public int worldSize() {
        return worldSize;
    }

    /** @return the id a checkpoint of this state gets */
    public CheckpointId id() {
        return new CheckpointId(step, generation);
    }

    /** @return the tensors by name, in insertion order (unmodifiable) */
    public Map<String, Tensor> tensors() {
        return tensors;
    }

    /**
     * @return the tensor called {@code name}
     * @throws IllegalArgumentException if there is none
     */
    public Tensor tensor(String name) {
        Tensor t = tensors.get(name);
        if (t == null) {
            throw new IllegalArgumentException("no tensor named '" + name + "' in the state of step " + step
                    + "; it has " + tensors.keySet());
        }
        return t;
    }

    /** @return the scalar values by name, each a {@link Long}, {@link Double} or {@link String} (unmodifiable) */
    public Map<String, Object> scalars() {
        return scalars;
    }

    /**
     * @return the {@code long} scalar called {@code name}
     * @throws IllegalArgumentException if there is none or it is not a long
     */
    public long longValue(String name) {
        return scalar(name, Long.class);
    }

    /**
     * @return the {@code double} scalar called {@code name}
     * @throws IllegalArgumentException if there is none or it is not a double
     */
    public double doubleValue(String name) {
        return scalar(name, Double.class);
    }

    /**
     * @return the string scalar called {@code name}
     * @throws IllegalArgumentException if there is none or it is not a string
     */
    public String stringValue(String name) {
        return scalar(name, String.class);
    }

    /** @return the user metadata, a JSON document (compact form when read back from a checkpoint) */
    public String metadataJson() {
        return metadataJson;
    }

    /** @return the total size of the tensor data in bytes */
    public long tensorBytes() {
        long n = 0;
        for (Tensor t : tensors.values()) {
            n += t.byteSize();
        }
        return n;
    }

    private <T> T scalar(String name, Class<T> type) {
        Object v = scalars.get(name);
        if (v == null) {
            throw new IllegalArgumentException("no scalar named '" + name + "' in the state of step " + step
                    + "; it has " + scalars.keySet());
        }
        if (!type.isInstance(v)) {
            throw new IllegalArgumentException("scalar '" + name + "' is a " + v.getClass().getSimpleName()
                    + ", not a " + type.getSimpleName());
        }
        return type.cast(v);
    }

    @Override
    public String toString() {
        return "CheckpointState[step=" + step + " epoch=" + epoch + " generation=" + generation + " worldSize="
                + worldSize + " tensors=" + tensors.size() + " scalars=" + scalars.keySet() + "]";
    }

    /** Builds a {@link CheckpointState}; not thread-safe. */
    public static final class Builder {
        private final long step;
        private long epoch;
        private long generation;
        private int worldSize = 1;
        private final Map<String, Tensor> tensors = new LinkedHashMap<>();
        private final Map<String, Object> scalars = new LinkedHashMap<>();
        private String metadataJson = "{}";

        private Builder(long step) {
            if (step < 0) {
                throw new IllegalArgumentException("step must be >= 0, got " + step);
            }
            this.step = step;
        }

        /** @param epoch the epoch ({@code >= 0}) */
        public Builder epoch(long epoch) {
            if (epoch < 0) {
                throw new IllegalArgumentException("epoch must be >= 0, got " + epoch);
            }
            this.epoch = epoch;
            return this;
        }

        /** @param generation the writer's generation ({@code >= 0}), e.g. {@code Kolo.generation()} */
        public Builder generation(long generation) {
            if (generation < 0) {
                throw new IllegalArgumentException("generation must be >= 0, got " + generation);
            }
            this.generation = generation;
            return this;
        }

        /** @param worldSize the number of workers ({@code >= 1}) */
        public Builder worldSize(int worldSize) {
            if (worldSize < 1) {
                throw new IllegalArgumentException("worldSize must be >= 1, got " + worldSize);
            }
            this.worldSize = worldSize;
            return this;
        }

        /**
         * Adds a tensor. Its bytes are read when a save snapshots the state, not now.
         *
         * @throws IllegalArgumentException if the name is empty or already used
         */
        public Builder tensor(String name, Tensor tensor) {
            checkName(name);
            Objects.requireNonNull(tensor, "tensor");
            if (tensors.containsKey(name)) {
                throw new IllegalArgumentException("duplicate tensor name '" + name + "'");
            }
            tensors.put(name, tensor);
            return this;
        }

        /** Adds all {@code tensors} in the map's iteration order. */
        public Builder tensors(Map<String, Tensor> tensors) {
            tensors.forEach(this::tensor);
            return this;
        }

        /** Adds a {@code long} scalar. */
        public Builder scalar(String name, long value) {
            return putScalar(name, value);
        }

        /** Adds a {@code double} scalar (NaN and infinities are kept). */
        public Builder scalar(String name, double value) {
            return putScalar(name, value);
        }

        /** Adds a string scalar. */
        public Builder scalar(String name, String value) {
            return putScalar(name, Objects.requireNonNull(value, "value"));
        }

        /**
         * @param json user metadata, one JSON value (usually an object); stored in the manifest
         * @throws IllegalArgumentException if it is not valid JSON
         */
        public Builder metadataJson(String json) {
            Objects.requireNonNull(json, "json");
            try {
                Json.parse(json);
            } catch (Json.JsonException e) {
                throw new IllegalArgumentException("checkpoint metadata is not valid JSON: " + e.getMessage(), e);
            }
            this.metadataJson = json.strip();
            return this;
        }

        /** @return the state */
        public CheckpointState build() {
            return new CheckpointState(this);
        }

        private Builder putScalar(String name, Object value) {
            checkName(name);
            if (scalars.containsKey(name)) {
                throw new IllegalArgumentException("duplicate scalar name '" + name + "'");
            }
            scalars.put(name, value);
            return this;
        }

        private static void checkName(String name) {
            if (name == null || name.isEmpty()) {
                throw new IllegalArgumentException("names of tensors and scalars must be non-empty");
            }
        }
    }
}
