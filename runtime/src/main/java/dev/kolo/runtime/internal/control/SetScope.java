package dev.kolo.runtime.internal.control;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Which ranks an op belongs to: the whole generation ({@link #GLOBAL}), or a process set, named by its id within
 * the generation and its members' ranks in the generation, in the set's rank order (set rank i is
 * {@code ranks.get(i)}). Requests to the coordinator carry it, so that the coordinator negotiates each set on
 * its own without having been told of the set beforehand; responses carry the id, so that a rank hands them to
 * the set's engine.
 *
 * @param id 0 for the whole generation, else the set's number (1, 2, ... in the order every rank created them)
 * @param ranks the members' ranks in the generation; empty for the whole generation
 */
public record SetScope(int id, List<Integer> ranks) {
    /** Most process sets a generation may have at once (ids are written as two bytes). */
    public static final int MAX_ID = 65535;

    /** The whole generation. */
    public static final SetScope GLOBAL = new SetScope(0, List.of());

    public SetScope {
        ranks = List.copyOf(ranks);
        String problem = check(id, ranks);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
    }

    /** @return null when {@code id} and {@code ranks} form a scope, else what is wrong */
    static String check(int id, List<Integer> ranks) {
        if (id < 0 || id > MAX_ID) {
            return "process set id " + id + " is outside 0.." + MAX_ID;
        }
        if ((id == 0) != ranks.isEmpty()) {
            return id == 0 ? "the whole generation (set 0) lists no ranks" : "process set " + id + " lists no ranks";
        }
        Set<Integer> seen = new HashSet<>();
        for (int r : ranks) {
            if (r < 0 || !seen.add(r)) {
                return "process set " + id + " lists rank " + r + (r < 0 ? "" : " twice");
            }
        }
        return null;
    }

    /** @return whether this is the whole generation */
    public boolean global() {
        return id == 0;
    }

    /** @return the rank in the generation of set rank {@code setRank} */
    public int globalRank(int setRank) {
        return global() ? setRank : ranks.get(setRank);
    }

    /** @return the ranks in the generation of the given set ranks */
    public List<Integer> globalRanks(List<Integer> setRanks) {
        return global() ? setRanks : setRanks.stream().map(ranks::get).toList();
    }

    /** @return "process set 2 (ranks [0, 1])", or "the job" for the whole generation */
    public String describe() {
        return global() ? "the job" : "process set " + id + " (ranks " + ranks + ")";
    }
}
