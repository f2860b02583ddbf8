package dev.kolo.elastic;

import dev.kolo.elastic.internal.StateEntry;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.Tensor;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The collective part of {@link ElasticState#sync()}: the ranks exchange what state they hold, pick the
 * rank holding the newest commit (the lowest such rank: rank 0 after a recovery, since survivors hold the
 * same commit and the oldest survivor is rank 0), and broadcast its committed tensors and values to all.
 * If no rank holds any state yet (a fresh or fully restarted job), every rank first reads the newest
 * valid checkpoint, and the newest found wins. When every rank already holds the same commit with the
 * same bytes (CRC32C of tensors and values; the usual case for the survivors of a failure), nothing is
 * broadcast.
 */
final class StateSync {
    static final String PREFIX = "kolo.elastic.sync/";
    private static final int FIELDS = 6;

    private StateSync() {
    }

    /** What one rank holds, as exchanged by the sync. */
    record Holding(long score, long layoutHash, long blobLength, long error, long crc, long generation,
            String workerId) {
    }

    /**
     * Result of a sync: the rank whose state won, the commit all now hold, the worker ids of the ranks in
     * rank order, and whether this rank read a checkpoint.
     */
    record Outcome(int root, long commit, List<String> workerIds, boolean fromCheckpoint) {
    }

    /**
     * Op names carry the generation: a sync's ops are the first of a generation and always travel with their
     * full spec (the runtime keeps one response-cache mirror per generation, so an older generation's ids
     * are never sent; the prefix also keeps the timeline of each sync apart).
     */
    private static String prefix(Kolo kolo) {
        return PREFIX + "g" + kolo.generation() + "/";
    }

    static Outcome run(Kolo kolo, ElasticState s) {
        CommittedState c = s.committed();
        if (!c.synced()) {
            c.captureLocal();
        }
        List<Holding> all = exchange(kolo, s, 0);
        boolean fromCheckpoint = false;
        if (all.stream().allMatch(h -> h.score() == 0)) {
            // Nobody holds state: every rank (they all see the same) reads the newest checkpoint it can find.
            RuntimeException failure = null;
            try {
                fromCheckpoint = s.restoreFromCheckpoint();
            } catch (RuntimeException e) {
                failure = e;
            }
            all = exchange(kolo, s, failure == null ? 0 : 1);
            if (failure != null) {
                throw failure;
            }
            List<Integer> failed = new ArrayList<>();
            for (int r = 0; r < all.size(); r++) {
                if (all.get(r).error() != 0) {
                    failed.add(r);
                }
            }
            if (!failed.isEmpty()) {
                throw new IllegalStateException("ranks " + failed + " could not restore the newest checkpoint "
                        + "(see their logs); no rank starts");
            }
        }
        checkLayouts(kolo, all);
        int root = 0;
        for (int r = 1; r < all.size(); r++) {
            if (newer(all.get(r), all.get(root))) {
                root = r;
            }
        }
        Holding best = all.get(root);
        boolean identical = all.stream().allMatch(h -> h.score() == best.score() && h.crc() == best.crc()
                && h.generation() == best.generation()
                && h.blobLength() == best.blobLength());
        if (all.size() > 1 && !identical) {
            broadcast(kolo, s, root, best);
        }
        c.finishSync();
        List<String> ids = new ArrayList<>();
        all.forEach(h -> ids.add(h.workerId()));
        return new Outcome(root, s.commits(), ids, fromCheckpoint);
    }

    private static List<Holding> exchange(Kolo kolo, ElasticState s, long error) {
        CommittedState c = s.committed();
        byte[] blob = encodeValues(c);
        long score = c.synced() ? c.snapshot().commits() + 1 : 0;
        long crc = c.snapshotCrc(blob);
        long gen = c.snapshotGeneration();
        long[] mine = {score, s.live().layoutHash(), blob.length, error, crc, gen};
        byte[] id = s.workerId().getBytes(StandardCharsets.UTF_8);
        if (kolo.size() == 1) {
            return List.of(new Holding(score, mine[1], mine[2], error, crc, gen, s.workerId()));
        }
        CompletableFuture<Tensor> fMeta = kolo.allgatherAsync(prefix(kolo) + "holding", Tensor.of(mine, 1, FIELDS));
        CompletableFuture<Tensor> fLens = kolo.allgatherAsync(prefix(kolo) + "idlen", Tensor.of(new int[] {id.length}, 1));
        CompletableFuture<Tensor> fIds = kolo.allgatherAsync(prefix(kolo) + "ids", Tensor.of(id, id.length));
        long[] meta = Waits.join(fMeta).toLongArray();
        int[] lens = Waits.join(fLens).toIntArray();
        byte[] ids = Waits.join(fIds).toByteArray();
        List<Holding> out = new ArrayList<>();
        int off = 0;
        for (int r = 0; r < lens.length; r++) {
            int f = FIELDS * r;
            out.add(new Holding(meta[f], meta[f + 1], meta[f + 2], meta[f + 3], meta[f + 4], meta[f + 5],
                    new String(ids, off, lens[r], StandardCharsets.UTF_8)));
            off += lens[r];
        }
        return out;
    }

    /** @return the snapshot's commit number and values as the sync exchanges them */
    private static byte[] encodeValues(CommittedState c) {
        return ValueCodec.encode(c.snapshot().commits(), c.snapshot().values());
    }

    /**
     * A commit taken in a later generation wins (a fenced worker's state from an abandoned generation never
     * overrides the survivors'), then the later commit; ties go to the lower rank.
     */
    private static boolean newer(Holding a, Holding b) {
        if (a.score() == 0 || b.score() == 0) {
            return a.score() > b.score();
        }
        return a.generation() != b.generation() ? a.generation() > b.generation() : a.score() > b.score();
    }

    private static void checkLayouts(Kolo kolo, List<Holding> all) {
        List<Integer> differ = new ArrayList<>();
        for (int r = 0; r < all.size(); r++) {
            if (all.get(r).layoutHash() != all.get(0).layoutHash()) {
                differ.add(r);
            }
        }
        if (!differ.isEmpty()) {
            throw new IllegalStateException("ranks registered different elastic state: ranks " + differ + " differ from "
                    + "rank 0 in the names, dtypes or shapes of their tensors or values (this is rank " + kolo.rank()
                    + "); every rank must register the same state");
        }
    }

    private static void broadcast(Kolo kolo, ElasticState s, int root, Holding rootHolding) {
        boolean isRoot = kolo.rank() == root;
        Snapshot snapshot = s.committed().snapshot();
        byte[] blob = isRoot ? encodeValues(s.committed()) : new byte[(int) rootHolding.blobLength()];
        CompletableFuture<Tensor> fBlob = kolo.broadcastAsync(prefix(kolo) + "values", Tensor.of(blob, blob.length), root);
        List<StateEntry> entries = s.live().entries();
        List<CompletableFuture<Tensor>> fs = new ArrayList<>(entries.size());
        for (StateEntry e : entries) {
            Tensor in = Tensor.wrap(e.dtype, snapshot.buffer(e), e.shape);
            fs.add(e.byteSize == 0 ? null : kolo.broadcastAsync(prefix(kolo) + "t/" + e.name, in, root));
        }
        // Wait for everything before touching the snapshot: a failure half-way leaves it intact.
        Tensor values = Waits.join(fBlob);
        List<Tensor> results = new ArrayList<>(fs.size());
        for (CompletableFuture<Tensor> f : fs) {
            results.add(f == null ? null : Waits.join(f));
        }
        if (!isRoot) {
            for (int i = 0; i < entries.size(); i++) {
                if (results.get(i) != null) {
                    snapshot.buffer(entries.get(i)).put(results.get(i).buffer());
                }
            }
            ValueCodec.Decoded d = ValueCodec.decode(values.toByteArray());
            snapshot.setValues(d.values(), d.commits());
        }
    }
}
