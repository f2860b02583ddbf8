package dev.kolo.runtime.internal.engine.agree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The cache's use order, kept in arrays by id, evicts as the access-ordered map it replaced did: the same ids,
 * the same specs, the same evictions, operation after operation.
 */
class TensorCacheTest {

    @Test
    void evictsTheLeastRecentlyUsedAsAnAccessOrderedMapDoes() {
        Random random = new Random(34);
        for (int capacity : new int[] {1, 3, 40, 200}) {
            TensorCache cache = new TensorCache(capacity);
            MapCache oracle = new MapCache(capacity);
            for (int step = 0; step < 20000; step++) {
                int what = random.nextInt(10);
                if (what < 5) {
                    OpSpec spec = spec("t" + random.nextInt(300), 1 + random.nextInt(2));
                    List<Integer> removed = new ArrayList<>();
                    List<Integer> expected = new ArrayList<>();
                    assertEquals(oracle.insert(spec, expected::add), cache.insert(spec, removed::add), "step " + step);
                    assertEquals(expected, removed, "evicted at step " + step);
                } else if (what < 9) {
                    int id = random.nextInt(capacity + 2);
                    oracle.touch(id);
                    cache.touch(id);
                } else {
                    int id = random.nextInt(capacity + 2);
                    oracle.remove(id);
                    cache.remove(id);
                }
                assertEquals(oracle.lru.size(), cache.size());
                assertEquals(oracle.used.length(), cache.idLimit());
                for (int id = 0; id < capacity + 2; id++) {
                    // containsKey: a get would count as a use of the access-ordered map
                    assertSame(oracle.lru.containsKey(id) ? oracle.specs.get(id) : null, cache.spec(id));
                }
            }
        }
    }

    private static OpSpec spec(String name, long elements) {
        return new OpSpec(name, OpType.ALLREDUCE, DType.FLOAT32, new long[] {elements}, ReduceOp.SUM, 1, 1, 0, null);
    }

    /** The cache as first written, on an access-ordered LinkedHashMap. */
    private static final class MapCache {
        final int capacity;
        final LinkedHashMap<Integer, OpSpec> lru = new LinkedHashMap<>(16, 0.75f, true);
        final Map<OpSpec, Integer> bySpec = new HashMap<>();
        final Map<String, Integer> byName = new HashMap<>();
        final Map<Integer, OpSpec> specs = new HashMap<>();
        final BitSet used = new BitSet();

        MapCache(int capacity) {
            this.capacity = capacity;
        }

        void touch(int id) {
            lru.get(id);
        }

        int insert(OpSpec spec, java.util.function.IntConsumer removed) {
            Integer known = bySpec.get(spec);
            if (known != null) {
                touch(known);
                return known;
            }
            Integer sameName = byName.get(spec.name);
            if (sameName != null) {
                remove(sameName);
                removed.accept(sameName);
            }
            int id = used.nextClearBit(0);
            used.set(id);
            specs.put(id, spec);
            lru.put(id, spec);
            bySpec.put(spec, id);
            byName.put(spec.name, id);
            for (Iterator<Integer> it = lru.keySet().iterator(); lru.size() > capacity; ) {
                int eldest = it.next();
                it.remove();
                forget(eldest);
                removed.accept(eldest);
            }
            return id;
        }

        void remove(int id) {
            if (lru.containsKey(id)) {
                lru.remove(id);
                forget(id);
            }
        }

        private void forget(int id) {
            OpSpec spec = specs.remove(id);
            used.clear(id);
            bySpec.remove(spec);
            byName.remove(spec.name, id);
        }
    }
}
