package dev.kolo.runtime.internal.engine.agree;

import dev.kolo.runtime.internal.control.OpSpec;
import java.util.Arrays;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import java.util.function.IntConsumer;

/**
 * One rank's cache of the op specs its generation has agreed on, each under a small id: a tensor submitted
 * again with the same spec is agreed among the ranks by id alone, over the data plane, without the
 * coordinator. Every rank holds an identical copy because every change happens at the same point of the
 * sequence all ranks execute (an agreement round): inserts when a coordinator response is executed, touches
 * when an entry's op runs, removals when a rank marks an entry invalid. Ids are the lowest free ones, so the
 * id space (and the bit sets of a round) stays as small as the cache; eviction is least recently used.
 *
 * <p>Confined to the collective thread.
 */
final class TensorCache {
    private final int capacity;
    /**
     * Use order, as a list linked through arrays indexed by id (a touch on every op boxes no id): {@link #eldest}
     * is the least recently used, {@link #newest} the most; -1 ends the list.
     */
    private int[] older = new int[64];
    private int[] newer = new int[64];
    private int eldest = -1;
    private int newest = -1;
    private int size;
    private final Map<OpSpec, Integer> bySpec = new HashMap<>();
    private final Map<String, Integer> byName = new HashMap<>();
    private final BitSet used = new BitSet();
    private OpSpec[] specs = new OpSpec[64];

    /** @param capacity most entries; 0 disables the cache (every op goes through the coordinator) */
    TensorCache(int capacity) {
        this.capacity = Math.max(0, capacity);
    }

    /** @return the id of exactly this spec, or -1 */
    int idOf(OpSpec spec) {
        Integer id = bySpec.get(spec);
        return id == null ? -1 : id;
    }

    /** @return the id under which a tensor of this name is cached (with whatever spec), or -1 */
    int idOfName(String name) {
        Integer id = byName.get(name);
        return id == null ? -1 : id;
    }

    /** @return the spec cached under {@code id}, or null */
    OpSpec spec(int id) {
        return id >= 0 && id < specs.length ? specs[id] : null;
    }

    /** Marks {@code id} as used now (it ran): the least recently used entry is evicted first. */
    void touch(int id) {
        if (spec(id) != null && id != newest) {
            unlink(id);
            append(id);
        }
    }

    /**
     * Caches {@code spec} (replacing an entry of the same name with another spec) and evicts the least
     * recently used entries beyond the capacity.
     *
     * @param removed told every id that leaves the cache here
     * @return the spec's id, or -1 when the cache is disabled
     */
    int insert(OpSpec spec, IntConsumer removed) {
        if (capacity == 0) {
            return -1;
        }
        int known = idOf(spec);
        if (known >= 0) {
            touch(known);
            return known;
        }
        int sameName = idOfName(spec.name);
        if (sameName >= 0) {
            remove(sameName);
            removed.accept(sameName);
        }
        int id = used.nextClearBit(0);
        used.set(id);
        if (id >= specs.length) {
            int length = Math.max(id + 1, 2 * specs.length);
            specs = Arrays.copyOf(specs, length);
            older = Arrays.copyOf(older, length);
            newer = Arrays.copyOf(newer, length);
        }
        specs[id] = spec;
        append(id);
        bySpec.put(spec, id);
        byName.put(spec.name, id);
        while (size > capacity) {
            int evicted = eldest;
            unlink(evicted);
            forget(evicted);
            removed.accept(evicted);
        }
        return id;
    }

    /** Drops {@code id}; nothing happens if it is not cached. */
    void remove(int id) {
        if (spec(id) != null) {
            unlink(id);
            forget(id);
        }
    }

    private void forget(int id) {
        OpSpec spec = specs[id];
        specs[id] = null;
        used.clear(id);
        bySpec.remove(spec);
        byName.remove(spec.name, id);
    }

    /** @return one more than the highest id in use: the bits a round's sets need */
    int idLimit() {
        return used.length();
    }

    int size() {
        return size;
    }

    /** Makes {@code id} the most recently used. */
    private void append(int id) {
        older[id] = newest;
        newer[id] = -1;
        if (newest < 0) {
            eldest = id;
        } else {
            newer[newest] = id;
        }
        newest = id;
        size++;
    }

    private void unlink(int id) {
        int before = older[id];
        int after = newer[id];
        if (before < 0) {
            eldest = after;
        } else {
            newer[before] = after;
        }
        if (after < 0) {
            newest = before;
        } else {
            older[after] = before;
        }
        size--;
    }
}
