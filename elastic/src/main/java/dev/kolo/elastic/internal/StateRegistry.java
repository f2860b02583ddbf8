package dev.kolo.elastic.internal;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.train.Parameter;
import dev.kolo.runtime.train.UpdateRule;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The live state an {@code ElasticState} registered: its tensors in registration order and its named
 * values, with the checks on registering (non-empty, unique names; nothing once the state is frozen) and on
 * reading and setting a value (it exists and has the type asked for).
 *
 * <p>Kept apart from {@code ElasticState} so that class holds the commit, sync and checkpoint protocol
 * while this one holds what is committed. The live value map is handed out as is: the snapshot restores
 * into it in place. Not thread-safe: used by the one training thread.
 */
public final class StateRegistry {
    private final List<StateEntry> entries = new ArrayList<>();
    private final Map<String, StateEntry> byName = new LinkedHashMap<>();
    private final Map<String, Object> values = new LinkedHashMap<>();
    private boolean frozen;

    /** Registers a FLOAT32 tensor held in {@code live}. */
    public void floats(String name, float[] live, long... shape) {
        add(new StateEntry.Floats(checkName(name), live, shape));
    }

    /** Registers a FLOAT64 tensor held in {@code live}. */
    public void doubles(String name, double[] live, long... shape) {
        add(new StateEntry.Doubles(checkName(name), live, shape));
    }

    /** Registers an INT32 tensor held in {@code live}. */
    public void ints(String name, int[] live, long... shape) {
        add(new StateEntry.Ints(checkName(name), live, shape));
    }

    /** Registers an INT64 tensor held in {@code live}. */
    public void longs(String name, long[] live, long... shape) {
        add(new StateEntry.Longs(checkName(name), live, shape));
    }

    /** Registers a tensor held in a writable buffer (little-endian bytes from index 0). */
    public void buffer(String name, DType dtype, ByteBuffer buffer, long... shape) {
        add(new StateEntry.Buffer(checkName(name), Objects.requireNonNull(dtype, "dtype"), buffer, shape));
    }

    /** Registers each parameter's values under its name. */
    public void parameters(List<Parameter> parameters) {
        for (Parameter p : parameters) {
            floats(p.name(), p.values(), p.shape());
        }
    }

    /** Registers every array of state {@code rule} keeps for {@code parameters}, under the names it gives them. */
    public void updateRule(UpdateRule rule, List<Parameter> parameters) {
        Objects.requireNonNull(rule, "rule");
        UpdateRule.StateSink sink = new UpdateRule.StateSink() {
            @Override
            public void floats(String name, float[] live, long[] shape) {
                StateRegistry.this.floats(name, live, shape);
            }

            @Override
            public void longs(String name, long[] live, long[] shape) {
                StateRegistry.this.longs(name, live, shape);
            }
        };
        for (Parameter p : parameters) {
            rule.state(p, sink);
        }
    }

    /** Registers the value {@code name} ({@link Long}, {@link Double} or {@link String}) with its initial value. */
    public void value(String name, Object initial) {
        checkOpenForRegistration(checkName(name));
        if (values.containsKey(name)) {
            throw new IllegalArgumentException("value '" + name + "' is already registered");
        }
        values.put(name, initial);
    }

    /**
     * Ends registration: called at the first commit, sync or checkpoint restore, since every rank must
     * hold the same layout from then on (a late registration would differ from the peers' and the snapshot).
     */
    public void freeze() {
        frozen = true;
    }

    /** @return the live value {@code name}, which must be a {@code type} */
    public <T> T get(String name, Class<T> type) {
        Object v = values.get(name);
        if (v == null) {
            throw new IllegalArgumentException("no value named '" + name + "'; registered: " + values.keySet());
        }
        if (!type.isInstance(v)) {
            throw new IllegalArgumentException("value '" + name + "' is a " + v.getClass().getSimpleName() + ", not a "
                    + type.getSimpleName());
        }
        return type.cast(v);
    }

    /** Sets the registered value {@code name}; {@code v} must have the type it was registered with. */
    public void set(String name, Object v) {
        Object old = values.get(name);
        if (old == null) {
            throw new IllegalArgumentException("no value named '" + name + "'; register it first with value(name, "
                    + "initial); registered: " + values.keySet());
        }
        if (old.getClass() != v.getClass()) {
            throw new IllegalArgumentException("value '" + name + "' is a " + old.getClass().getSimpleName()
                    + ", not a " + v.getClass().getSimpleName());
        }
        values.put(name, v);
    }

    /** @return the registered tensors, in registration order (the order of commits, checkpoints and syncs) */
    public List<StateEntry> entries() {
        return entries;
    }

    /** @return the live values, by name in registration order; the snapshot restores into this map in place */
    public Map<String, Object> values() {
        return values;
    }

    /**
     * @return an FNV-1a hash of the names, dtypes and shapes of the tensors and the names and types of the
     *     values: equal on ranks that registered the same state, which a sync checks before exchanging bytes
     */
    public long layoutHash() {
        long h = 0xcbf29ce484222325L;
        StringBuilder sb = new StringBuilder();
        entries.forEach(e -> sb.append(e.layout()).append(';'));
        values.forEach((k, v) -> sb.append(k).append('=').append(v.getClass().getSimpleName()).append(';'));
        for (byte b : sb.toString().getBytes(StandardCharsets.UTF_8)) {
            h = (h ^ (b & 0xff)) * 0x100000001b3L;
        }
        return h;
    }

    /**
     * @return {@code name} if it is non-empty, for a tensor, a value or a worker id
     * @throws IllegalArgumentException if it is null or empty
     */
    public static String checkName(String name) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("registered tensors and values need a non-empty name");
        }
        return name;
    }

    private void add(StateEntry e) {
        checkOpenForRegistration(e.name);
        if (byName.containsKey(e.name)) {
            throw new IllegalArgumentException("tensor '" + e.name + "' is already registered");
        }
        entries.add(e);
        byName.put(e.name, e);
    }

    private void checkOpenForRegistration(String name) {
        if (frozen) {
            throw new IllegalStateException("cannot register '" + name + "' after the first commit, sync or "
                    + "restore: register all state before Elastic.run");
        }
    }
}
