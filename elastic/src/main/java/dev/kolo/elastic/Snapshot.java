package dev.kolo.elastic;

import dev.kolo.elastic.internal.StateEntry;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The last committed state, held off-heap: one direct buffer per registered tensor (allocated once and
 * reused by every commit), a copy of the values and the commit number. Not thread-safe.
 */
final class Snapshot {
    private final Map<String, ByteBuffer> tensors = new LinkedHashMap<>();
    private Map<String, Object> values = Map.of();
    private long commits;
    private boolean taken;

    /** Copies every live tensor and value into the snapshot. */
    void capture(List<StateEntry> entries, Map<String, Object> liveValues, long commitNumber) {
        for (StateEntry e : entries) {
            e.save(buffer(e));
        }
        values = new LinkedHashMap<>(liveValues);
        commits = commitNumber;
        taken = true;
    }

    /** Copies the snapshot back into the live tensors and values. */
    void restoreInto(List<StateEntry> entries, Map<String, Object> liveValues) {
        for (StateEntry e : entries) {
            e.load(buffer(e));
        }
        liveValues.clear();
        liveValues.putAll(values);
    }

    /** @return the off-heap image of {@code e} (allocated on first use), position 0, little-endian */
    ByteBuffer buffer(StateEntry e) {
        ByteBuffer b = tensors.get(e.name);
        if (b == null || b.capacity() != e.byteSize) {
            b = ByteBuffer.allocateDirect(e.byteSize).order(ByteOrder.LITTLE_ENDIAN);
            tensors.put(e.name, b);
        }
        return b.duplicate().clear().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Replaces the values and commit number (after a sync or a checkpoint restore filled the buffers). */
    void setValues(Map<String, Object> v, long commitNumber) {
        values = new LinkedHashMap<>(v);
        commits = commitNumber;
        taken = true;
    }

    Map<String, Object> values() {
        return values;
    }

    long commits() {
        return commits;
    }

    boolean taken() {
        return taken;
    }

    long bytes() {
        long n = 0;
        for (ByteBuffer b : tensors.values()) {
            n += b.capacity();
        }
        return n;
    }
}
