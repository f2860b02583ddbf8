package dev.kolo.runtime;

import dev.kolo.runtime.internal.engine.CollectiveClient;
import java.time.Duration;
import java.util.List;

/**
 * Collectives among a subset of the job's ranks (Horovod's process sets): for hybrid model and data parallelism,
 * pipeline stages, or evaluation on a few ranks. Made by {@link Kolo#processSet(int...)}, which every rank of
 * the job calls with the same ranks; a member then calls the set's collectives (every collective of {@link Kolo},
 * blocking and asynchronous) with ranks, sizes and roots of the set: set rank {@code i} is the job's rank
 * {@code ranks().get(i)}. Each set agrees on its ops on its own, over connections of its own, so ops of one set
 * never wait for another set's, and its names are its own (the same name may run in two sets, and in the job, at
 * once).
 *
 * <p>A rank outside the set gets a {@link KoloException} from any collective at once. A set lives as long as its
 * generation: when the job regroups (elastic), every set ends, its pending ops fail with the generation's cause
 * and later calls fail naming it; the program creates its sets again after {@link Kolo#rejoin()}, as it
 * re-reads its rank. Thread-safe.
 */
public final class ProcessSet extends Collectives implements AutoCloseable {
    private final Kolo kolo;
    private final int id;
    private final List<Integer> ranks;
    private final long generation;
    private final int rank;
    /** This rank's engine for the set; null on a rank outside it. */
    private final CollectiveClient client;
    private volatile boolean closed;

    ProcessSet(Kolo kolo, int id, List<Integer> ranks, long generation, CollectiveClient client) {
        this.kolo = kolo;
        this.id = id;
        this.ranks = List.copyOf(ranks);
        this.generation = generation;
        this.rank = this.ranks.indexOf(kolo.rank());
        this.client = client;
    }

    /** @return the set's id: 1, 2, ... in the order the job's ranks created the sets of this generation */
    public int id() {
        return id;
    }

    /** @return the members' ranks in the job, in the set's rank order */
    public List<Integer> ranks() {
        return ranks;
    }

    /** @return this rank's rank in the set, or -1 if this rank is not a member */
    @Override
    public int rank() {
        return rank;
    }

    /** @return the number of ranks in the set */
    @Override
    public int size() {
        return ranks.size();
    }

    /** @return whether the job's rank {@code jobRank} is a member of the set */
    public boolean contains(int jobRank) {
        return ranks.contains(jobRank);
    }

    /** @return the generation the set belongs to; it ends with it */
    public long generation() {
        return generation;
    }

    @Override
    CollectiveClient client() {
        if (closed) {
            throw new KoloException(describe() + " is closed");
        }
        if (kolo.generation() != generation) {
            throw new KoloException(describe() + " belonged to generation " + generation + ", and the job has "
                    + "regrouped into generation " + kolo.generation() + " since, which ends every process set: create "
                    + "it again with processSet(...) on every rank after rejoin()");
        }
        if (client == null) {
            throw new KoloException("rank " + kolo.rank() + " is not a member of " + describe()
                    + ": only its members may call its collectives (check contains(kolo.rank()) first)");
        }
        return client;
    }

    @Override
    Duration opTimeout() {
        return kolo.config().get(Settings.OP_TIMEOUT);
    }

    /**
     * Removes the set: every member calls it (it waits, as a barrier of the set, for the others to be done with
     * the set's ops), then the set's connections close and later calls fail. On a rank outside the set, and on a
     * set whose generation has ended, it only marks the set closed. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        try {
            if (client != null && kolo.generation() == generation) {
                barrier();
            }
        } finally {
            closed = true;
            kolo.endProcessSet(this);
        }
    }

    @Override
    public String toString() {
        return describe();
    }

    private String describe() {
        return "process set " + id + " (ranks " + ranks + " of generation " + generation + ")";
    }
}
