package dev.kolo.runtime;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The coordinator's response cache: a bounded, least-recently-used map from op specs to small ids. When a
 * step submits the same tensors as before, ranks send only ids and the coordinator answers with ids. Ranks
 * mirror the cache from the responses (new ids with their specs, evicted ids), so both sides agree without
 * a protocol of their own. Ids are never reused; a few recently evicted ones stay resolvable for ranks that
 * sent an id before they learnt of its eviction.
 */
final class ResponseCache {
    private final int capacity;
    private final LinkedHashMap<Integer, OpSpec> byId = new LinkedHashMap<>(16, 0.75f, true);
    private final Map<OpSpec, Integer> bySpec = new HashMap<>();
    private final LinkedHashMap<Integer, OpSpec> recentlyEvicted = new LinkedHashMap<>();
    private int nextId;

    ResponseCache(int capacity) {
        this.capacity = Math.max(0, capacity);
    }

    /** @return the id of {@code spec}, refreshing it, or -1 */
    int idOf(OpSpec spec) {
        Integer id = bySpec.get(spec);
        if (id == null) {
            return -1;
        }
        byId.get(id); // access order: most recently used
        return id;
    }

    /** @return the spec of {@code id} (also if recently evicted), or null */
    OpSpec lookup(int id) {
        OpSpec s = byId.get(id);
        return s != null ? s : recentlyEvicted.get(id);
    }

    /** Adds {@code spec}; evicted ids are appended to {@code evicted}. @return its id, or -1 if disabled */
    int insert(OpSpec spec, List<Integer> evicted) {
        if (capacity == 0) {
            return -1;
        }
        int id = nextId++;
        byId.put(id, spec);
        bySpec.put(spec, id);
        while (byId.size() > capacity) {
            Map.Entry<Integer, OpSpec> eldest = byId.entrySet().iterator().next();
            byId.remove(eldest.getKey());
            bySpec.remove(eldest.getValue());
            evicted.add(eldest.getKey());
            recentlyEvicted.put(eldest.getKey(), eldest.getValue());
            if (recentlyEvicted.size() > capacity + 1024) {
                recentlyEvicted.remove(recentlyEvicted.keySet().iterator().next());
            }
        }
        return id;
    }

    int size() {
        return byId.size();
    }
}
