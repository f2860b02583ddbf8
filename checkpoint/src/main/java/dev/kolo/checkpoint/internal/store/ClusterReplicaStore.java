package dev.kolo.checkpoint.internal.store;

import com.hazelcast.config.MapConfig;
import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import dev.kolo.checkpoint.CheckpointException;
import dev.kolo.checkpoint.CheckpointId;
import dev.kolo.checkpoint.CheckpointImage;
import dev.kolo.checkpoint.CheckpointStore;
import dev.kolo.checkpoint.StoredCheckpoint;
import dev.kolo.checkpoint.internal.format.Json;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.WritableByteChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Checkpoints kept in memory in the Hazelcast cluster, in an {@code IMap<String, byte[]>} with at least
 * one synchronous backup, so the state survives the loss of the member that wrote it and a restarted or
 * new worker fetches it from its peers without touching disk. See README.md for the layout:
 * <ul>
 *   <li>{@code <name>@<write>/chunk/<k>}: bytes {@code [k*C, (k+1)*C)} of the data file (C = chunk size,
 *       4 MiB by default, so no single value is huge);</li>
 *   <li>{@code <name>@<write>/manifest}: the manifest, as in a directory;</li>
 *   <li>{@code index}: JSON listing the committed checkpoints. Replacing it (compare-and-set) is the
 *       commit point; chunks of uncommitted or deleted writes are removed after.</li>
 * </ul>
 */
public final class ClusterReplicaStore implements CheckpointStore {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterReplicaStore.class);
    static final String INDEX_KEY = "index";
    static final int DEFAULT_CHUNK = 4 << 20;
    /** Chunks per putAll/getAll: bounds the heap a transfer needs. */
    private static final int BATCH = 16;
    private static final long INDEX_CAS_DEADLINE_MS = 30_000;

    private final HazelcastInstance hazelcast;
    private final IMap<String, byte[]> map;
    private final int chunkBytes;

    /**
     * @param hazelcast a member of the job's cluster
     * @param mapName the map holding the replica (one per job, e.g. {@link #mapNameFor(String)})
     */
    public ClusterReplicaStore(HazelcastInstance hazelcast, String mapName) {
        this(hazelcast, mapName, DEFAULT_CHUNK);
    }

    /**
     * @param chunkBytes the size of one chunk value, {@code >= 4096}
     * @throws CheckpointException if the map is configured with no backup and that cannot be changed
     */
    public ClusterReplicaStore(HazelcastInstance hazelcast, String mapName, int chunkBytes) {
        this.hazelcast = Objects.requireNonNull(hazelcast, "hazelcast");
        if (chunkBytes < 4096) {
            throw new IllegalArgumentException("chunk size must be >= 4096 bytes, got " + chunkBytes);
        }
        this.chunkBytes = chunkBytes;
        ensureBackup(hazelcast, mapName);
        this.map = hazelcast.getMap(mapName);
    }

    /** @return the replica map's name for a job: {@code kolo-checkpoints-<job>} */
    public static String mapNameFor(String job) {
        return "kolo-checkpoints-" + job;
    }

    private static void ensureBackup(HazelcastInstance hz, String mapName) {
        MapConfig effective = hz.getConfig().findMapConfig(mapName);
        if (effective.getBackupCount() >= 1) {
            return;
        }
        try {
            hz.getConfig().addMapConfig(new MapConfig(mapName).setBackupCount(1));
        } catch (RuntimeException e) {
            throw new CheckpointException("the checkpoint replica map " + mapName + " is configured with backup count "
                    + effective.getBackupCount() + " and cannot be changed (" + e.getMessage()
                    + "); configure it with backup-count >= 1 so the replica survives the loss of a member", e);
        }
    }

    @Override
    public String describe() {
        return "cluster replica " + map.getName();
    }

    @Override
    public void commit(CheckpointImage image) throws IOException {
        CheckpointId id = image.id();
        String prefix = id.name() + "@" + UUID.randomUUID().toString().substring(0, 8);
        long size = image.dataSize();
        int chunks = (int) ((size + chunkBytes - 1) / chunkBytes);
        boolean committed = false;
        try {
            try (ChunkWriter out = new ChunkWriter(prefix)) {
                image.writeData(out);
            }
            map.set(prefix + "/manifest", image.manifestBytes());
            Entry entry = new Entry(id, prefix, size, chunkBytes, chunks);
            List<Entry> before = updateIndex(list -> {
                list.removeIf(e -> e.id().equals(id));
                list.add(entry);
            });
            committed = true;
            for (Entry old : before) {
                if (old.id().equals(id)) {
                    removeKeys(old);
                }
            }
        } catch (RuntimeException e) {
            throw new IOException("cannot store " + id + " in " + describe() + ": " + e, e);
        } finally {
            if (!committed) {
                try {
                    removeKeys(new Entry(id, prefix, size, chunkBytes, chunks));
                } catch (RuntimeException cleanup) {
                    LOG.debug("cannot remove the uncommitted replica {}: {}", prefix, cleanup.toString());
                }
            }
        }
    }

    @Override
    public List<CheckpointId> list() throws IOException {
        List<CheckpointId> ids = new ArrayList<>();
        for (Entry e : readIndex()) {
            ids.add(e.id());
        }
        return ids;
    }

    @Override
    public StoredCheckpoint open(CheckpointId id) throws IOException {
        for (Entry e : readIndex()) {
            if (e.id().equals(id)) {
                return new Stored(e);
            }
        }
        throw new NoSuchFileException(map.getName() + "/" + id.name(), null, "not in the cluster replica");
    }

    @Override
    public void delete(CheckpointId id) throws IOException {
        List<Entry> before;
        try {
            before = updateIndex(list -> list.removeIf(e -> e.id().equals(id)));
        } catch (RuntimeException e) {
            throw new IOException("cannot delete " + id + " from " + describe() + ": " + e, e);
        }
        for (Entry e : before) {
            if (e.id().equals(id)) {
                removeKeys(e);
            }
        }
    }

    private void removeKeys(Entry e) {
        Set<String> keys = new HashSet<>();
        keys.add(e.prefix() + "/manifest");
        for (int k = 0; k < e.chunks(); k++) {
            keys.add(chunkKey(e.prefix(), k));
        }
        for (String k : keys) {
            map.delete(k);
        }
    }

    static String chunkKey(String prefix, int k) {
        return prefix + "/chunk/" + k;
    }

    // ------------------------------------------------------------------ index

    /** One committed checkpoint in the index. */
    record Entry(CheckpointId id, String prefix, long dataBytes, int chunkBytes, int chunks) {
    }

    private interface IndexChange {
        void apply(List<Entry> entries);
    }

    /** Applies {@code change} to the index with compare-and-set; returns the entries before the change. */
    private List<Entry> updateIndex(IndexChange change) throws IOException {
        long deadline = System.currentTimeMillis() + INDEX_CAS_DEADLINE_MS;
        while (true) {
            byte[] current = map.get(INDEX_KEY);
            List<Entry> before = current == null ? List.of() : decodeIndex(current);
            List<Entry> after = new ArrayList<>(before);
            change.apply(after);
            after.sort(Comparator.comparing(Entry::id).reversed());
            byte[] next = encodeIndex(after);
            boolean done = current == null ? map.putIfAbsent(INDEX_KEY, next) == null
                    : map.replace(INDEX_KEY, current, next);
            if (done) {
                return before;
            }
            if (System.currentTimeMillis() > deadline) {
                throw new IOException("the replica index of " + map.getName() + " kept changing for "
                        + INDEX_CAS_DEADLINE_MS / 1000 + " s; is more than one worker writing checkpoints?");
            }
            Thread.onSpinWait();
        }
    }

    private List<Entry> readIndex() throws IOException {
        byte[] bytes;
        try {
            bytes = map.get(INDEX_KEY);
        } catch (RuntimeException e) {
            throw new IOException("cannot read the index of " + describe() + ": " + e, e);
        }
        return bytes == null ? List.of() : decodeIndex(bytes);
    }

    private static byte[] encodeIndex(List<Entry> entries) {
        List<Object> list = new ArrayList<>();
        for (Entry e : entries) {
            Map<String, Object> o = new LinkedHashMap<>();
            o.put("id", e.id().name());
            o.put("key", e.prefix());
            o.put("dataBytes", e.dataBytes());
            o.put("chunkBytes", e.chunkBytes());
            o.put("chunks", e.chunks());
            list.add(o);
        }
        Map<String, Object> index = new LinkedHashMap<>();
        index.put("format", "kolo-checkpoint-replica");
        index.put("formatVersion", 1L);
        index.put("committed", list);
        return Json.write(index).getBytes(StandardCharsets.UTF_8);
    }

    private List<Entry> decodeIndex(byte[] bytes) throws IOException {
        return decodeIndex(bytes, describe());
    }

    /** @throws IOException naming {@code where} if the index is not JSON or any entry is inconsistent */
    static List<Entry> decodeIndex(byte[] bytes, String where) throws IOException {
        try {
            Map<String, Object> index = Json.object(Json.parse(new String(bytes, StandardCharsets.UTF_8)), "index");
            List<Entry> entries = new ArrayList<>();
            for (Object o : Json.array(Json.member(index, "committed", "index"), "committed")) {
                Map<String, Object> e = Json.object(o, "index entry");
                String name = Json.string(e, "id", "index entry");
                CheckpointId id = CheckpointId.parse(name)
                        .orElseThrow(() -> new IllegalArgumentException("bad checkpoint id " + name));
                entries.add(indexEntry(id, Json.string(e, "key", "index entry"), Json.integer(e, "dataBytes", "entry"),
                        Json.integer(e, "chunkBytes", "entry"), Json.integer(e, "chunks", "entry")));
            }
            return entries;
        } catch (RuntimeException e) {
            throw new IOException("the index of " + where + " is unreadable: " + e.getMessage(), e);
        }
    }

    /** An index entry whose sizes agree with each other; the index is written by another member. */
    static Entry indexEntry(CheckpointId id, String key, long dataBytes, long chunkBytes, long chunks) {
        if (key.isEmpty()) {
            throw new IllegalArgumentException("entry " + id + " has an empty key");
        }
        if (dataBytes < 0 || chunkBytes < 1 || chunkBytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("entry " + id + " has dataBytes " + dataBytes + " and chunkBytes "
                    + chunkBytes);
        }
        long needed = dataBytes / chunkBytes + (dataBytes % chunkBytes == 0 ? 0 : 1);
        if (needed > Integer.MAX_VALUE || chunks != needed) {
            throw new IllegalArgumentException("entry " + id + " has " + chunks + " chunks of " + chunkBytes
                    + " bytes for " + dataBytes + " bytes (" + needed + " expected)");
        }
        return new Entry(id, key, dataBytes, (int) chunkBytes, (int) chunks);
    }

    @Override
    public String toString() {
        return "ClusterReplicaStore[" + map.getName() + " on " + hazelcast.getName() + "]";
    }

    // ------------------------------------------------------------------ writing

    /** Cuts the data stream into chunk values and puts them in batches. */
    private final class ChunkWriter implements WritableByteChannel {
        private final String prefix;
        private final Map<String, byte[]> batch = new HashMap<>();
        private byte[] chunk;
        private int filled;
        private int index;
        private boolean open = true;

        ChunkWriter(String prefix) {
            this.prefix = prefix;
        }

        @Override
        public int write(ByteBuffer src) {
            int n = src.remaining();
            while (src.hasRemaining()) {
                if (chunk == null) {
                    chunk = new byte[chunkBytes];
                    filled = 0;
                }
                int take = Math.min(src.remaining(), chunkBytes - filled);
                src.get(chunk, filled, take);
                filled += take;
                if (filled == chunkBytes) {
                    emit(chunk);
                }
            }
            return n;
        }

        private void emit(byte[] bytes) {
            batch.put(chunkKey(prefix, index++), bytes);
            chunk = null;
            if (batch.size() >= BATCH) {
                flush();
            }
        }

        private void flush() {
            if (!batch.isEmpty()) {
                map.putAll(batch);
                batch.clear();
            }
        }

        @Override
        public boolean isOpen() {
            return open;
        }

        @Override
        public void close() {
            if (!open) {
                return;
            }
            open = false;
            if (chunk != null && filled > 0) {
                emit(Arrays.copyOf(chunk, filled));
            }
            flush();
        }
    }

    // ------------------------------------------------------------------ reading

    /** Reads chunks on demand, a batch at a time, dropping those already passed. */
    private final class Stored implements StoredCheckpoint {
        private final Entry entry;
        private final Map<Integer, byte[]> cache = new HashMap<>();

        Stored(Entry entry) {
            this.entry = entry;
        }

        @Override
        public CheckpointId id() {
            return entry.id();
        }

        @Override
        public String location() {
            return map.getName() + "/" + entry.prefix();
        }

        @Override
        public String manifestLocation() {
            return location() + "/manifest";
        }

        @Override
        public String dataLocation() {
            return location() + "/chunk/*";
        }

        @Override
        public byte[] readManifest() throws IOException {
            byte[] b = map.get(entry.prefix() + "/manifest");
            if (b == null) {
                throw new NoSuchFileException(manifestLocation());
            }
            return b;
        }

        @Override
        public long dataSize() {
            return entry.dataBytes();
        }

        @Override
        public ByteBuffer readData(long offset, int length) throws IOException {
            if (offset < 0 || length < 0 || offset > entry.dataBytes() - length) {
                throw new java.io.EOFException(location() + " holds " + entry.dataBytes() + " bytes; cannot read "
                        + length + " at offset " + offset);
            }
            ByteBuffer out = ByteBuffer.allocateDirect(length).order(ByteOrder.LITTLE_ENDIAN);
            int first = (int) (offset / entry.chunkBytes());
            cache.keySet().removeIf(k -> k < first);
            long pos = offset;
            while (out.hasRemaining()) {
                int k = (int) (pos / entry.chunkBytes());
                byte[] chunk = chunk(k);
                int within = (int) (pos - (long) k * entry.chunkBytes());
                int take = Math.min(out.remaining(), chunk.length - within);
                if (take <= 0) {
                    throw new IOException(dataLocation() + ": chunk " + k + " is " + chunk.length
                            + " bytes, too short for the data size " + entry.dataBytes());
                }
                out.put(chunk, within, take);
                pos += take;
            }
            return out.flip();
        }

        private byte[] chunk(int k) throws IOException {
            byte[] c = cache.get(k);
            if (c != null) {
                return c;
            }
            Set<String> keys = new HashSet<>();
            Map<String, Integer> indexOf = new HashMap<>();
            for (int i = k; i < Math.min(entry.chunks(), k + BATCH); i++) {
                if (!cache.containsKey(i)) {
                    String key = chunkKey(entry.prefix(), i);
                    keys.add(key);
                    indexOf.put(key, i);
                }
            }
            Map<String, byte[]> got;
            try {
                got = map.getAll(keys);
            } catch (RuntimeException e) {
                throw new IOException("cannot read " + dataLocation() + ": " + e, e);
            }
            got.forEach((key, value) -> cache.put(indexOf.get(key), value));
            c = cache.get(k);
            if (c == null) {
                throw new NoSuchFileException(chunkKey(location(), k), null, "replica chunk missing (lost with a "
                        + "member that had no backup?)");
            }
            return c;
        }

        @Override
        public void close() {
            cache.clear();
        }
    }

    /** @return the entry of {@code id} in the index, for tests */
    Optional<Entry> entry(CheckpointId id) throws IOException {
        return readIndex().stream().filter(e -> e.id().equals(id)).findFirst();
    }
}
