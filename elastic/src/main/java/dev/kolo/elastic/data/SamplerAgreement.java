package dev.kolo.elastic.data;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.Tensor;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The check that every rank samples the same way before an epoch (or the rest of one) is split among them: one
 * allgather of a few numbers per rank. Ranks that disagree would train on overlapping or missing samples without
 * any other sign; here every rank gets the same error naming what differs, on which ranks, and the fix.
 */
final class SamplerAgreement {
    private static final String[] FIELDS = {"data set size", "seed", "shuffle", "drop-last", "global batch size"};
    private static final String[] FIXES = {
        "every rank must sample the same data set: check that every worker reads the same files",
        "give every rank the same seed",
        "give every rank the same shuffle setting",
        "give every rank the same drop-last setting",
        "every rank must split a step's batch the same way: give every rank the same batch size or split"};

    private SamplerAgreement() {
    }

    /**
     * @throws IllegalArgumentException on every rank if the ranks' values differ (nothing is changed)
     * @throws dev.kolo.runtime.KoloException if the collective fails (a lost worker)
     */
    static void check(Kolo kolo, String sampler, long datasetSize, long seed, boolean shuffle, boolean dropLast,
            long globalBatch) {
        long[] mine = {datasetSize, seed, shuffle ? 1 : 0, dropLast ? 1 : 0, globalBatch};
        long[] all = kolo.allgather("kolo.sampler." + sampler + ".check", Tensor.of(mine, 1, mine.length))
                .toLongArray();
        List<String> differences = new ArrayList<>();
        for (int f = 0; f < FIELDS.length; f++) {
            Map<Long, List<Integer>> ranksByValue = new TreeMap<>();
            for (int r = 0; r < all.length / mine.length; r++) {
                ranksByValue.computeIfAbsent(all[r * mine.length + f], v -> new ArrayList<>()).add(r);
            }
            if (ranksByValue.size() > 1) {
                StringBuilder s = new StringBuilder("the ranks disagree on the " + FIELDS[f] + " (");
                String sep = "";
                for (Map.Entry<Long, List<Integer>> e : ranksByValue.entrySet()) {
                    s.append(sep).append(f == 2 || f == 3 ? String.valueOf(e.getKey() == 1) : e.getKey()).append(" on rank").append(e.getValue().size() > 1 ? "s " : " ")
                            .append(e.getValue().toString().replaceAll("[\\[\\]]", ""));
                    sep = "; ";
                }
                differences.add(s.append("): ").append(FIXES[f]).toString());
            }
        }
        if (!differences.isEmpty()) {
            throw new IllegalArgumentException("sampler '" + sampler + "': " + String.join("; and ", differences));
        }
    }
}
