package dev.kolo.runtime;

import dev.kolo.runtime.internal.control.SetScope;
import dev.kolo.runtime.internal.engine.CollectiveClient;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * How a worker creates process sets: the job's ranks exchange the set each asked for (an allgather of the whole
 * job, so that a disagreement fails on every rank instead of leaving some waiting), then each member opens its
 * side of the set. Sets are numbered in the order they are created, anew in every generation.
 */
final class ProcessSets {
    /** The name of the exchange: one at a time per worker (creation is serialized here). */
    static final String EXCHANGE = "kolo.process-set";

    private long generation = -1;
    private int created;

    /** A set the ranks agreed on: its number in the generation and its ranks in the job. */
    record Agreed(int id, List<Integer> ranks, long generation) {
    }

    /**
     * Agrees with every rank of {@code job} on the set this rank asked for, numbering it.
     *
     * @param job the whole job (the exchange runs among all its ranks)
     * @param gen the job's generation now
     */
    synchronized Agreed agree(Collectives job, long gen, int[] asked) {
        if (gen != generation) {
            generation = gen;
            created = 0;
        }
        int id = created + 1;
        int[] row = new int[asked.length + 2];
        row[0] = id;
        row[1] = asked.length;
        System.arraycopy(asked, 0, row, 2, asked.length);
        Tensor all = job.allgather(EXCHANGE, Tensor.of(row, row.length));
        Map<Integer, List<Integer>> byRank = new LinkedHashMap<>();
        List<List<Integer>> rows = rows(all);
        for (int r = 0; r < rows.size(); r++) {
            byRank.put(r, rows.get(r));
        }
        List<Integer> mine = rows.get(job.rank());
        if (rows.stream().anyMatch(x -> !x.equals(mine))) {
            throw new CollectiveMismatchException("processSet: the ranks asked for different process sets: "
                    + describe(byRank) + ". Every rank calls processSet with the same ranks in the same order, and "
                    + "creates the same sets in the same order");
        }
        List<Integer> ranks = mine.subList(1, mine.size());
        String wrong = check(ranks, job.size());
        if (wrong != null) {
            throw new IllegalArgumentException("processSet(" + ranks + "): " + wrong);
        }
        if (id > SetScope.MAX_ID) {
            throw new IllegalArgumentException("processSet: generation " + gen + " already has " + SetScope.MAX_ID
                    + " process sets, the most it may have; close sets and make fewer");
        }
        created = id;
        return new Agreed(id, List.copyOf(ranks), gen);
    }

    /**
     * Opens this member's side of an agreed set on the job's client.
     *
     * @return the set's client, or null when this rank is no member of it
     */
    static CollectiveClient open(CollectiveClient jobClient, int rank, Agreed set) {
        if (!set.ranks().contains(rank)) {
            return null;
        }
        CollectiveClient client = jobClient.openSet(set.generation(), new SetScope(set.id(), set.ranks()));
        if (client == null) {
            throw new KoloException("generation " + set.generation() + " ended while process set " + set.id()
                    + " (ranks " + set.ranks() + ") was created: create it again after rejoin()");
        }
        return client;
    }

    /** Splits the gathered rows [id, n, ranks...] by rank: each list is the id followed by the ranks. */
    private static List<List<Integer>> rows(Tensor all) {
        ByteBuffer in = all.buffer();
        List<List<Integer>> rows = new ArrayList<>();
        for (int at = 0; at < in.limit(); ) {
            int n = in.getInt(at + 4);
            List<Integer> row = new ArrayList<>(n + 1);
            row.add(in.getInt(at));
            for (int i = 0; i < n; i++) {
                row.add(in.getInt(at + 8 + 4 * i));
            }
            rows.add(row);
            at += 8 + 4 * n;
        }
        return rows;
    }

    private static String describe(Map<Integer, List<Integer>> byRank) {
        StringBuilder b = new StringBuilder();
        byRank.forEach((rank, row) -> b.append(b.length() == 0 ? "" : "; ").append("rank ").append(rank)
                .append(" asked for set ").append(row.get(0)).append(" of ranks ").append(row.subList(1, row.size())));
        return b.toString();
    }

    /** @return null when {@code ranks} make a set of a job of {@code size}, else what is wrong */
    static String check(List<Integer> ranks, int size) {
        if (ranks.isEmpty()) {
            return "a process set needs at least one rank";
        }
        Set<Integer> seen = new HashSet<>();
        for (int r : ranks) {
            if (r < 0 || r >= size) {
                return "rank " + r + " is not a rank of the job (0.." + (size - 1) + ")";
            }
            if (!seen.add(r)) {
                return "rank " + r + " is listed twice";
            }
        }
        return null;
    }
}
