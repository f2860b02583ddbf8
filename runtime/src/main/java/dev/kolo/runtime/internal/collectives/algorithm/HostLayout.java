package dev.kolo.runtime.internal.collectives.algorithm;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which ranks of a generation share a host, and how a hierarchical allreduce splits its buffer among them: into
 * {@code blocks} blocks, host h's local rank l owning the contiguous run {@code [first(h, l), first(h, l + 1))} of them.
 * With the same number of ranks on every host and as many blocks, each rank owns one block and carries its share of
 * the bytes across hosts (as NCCL does); with one block, the host's last rank alone carries everything (a ring of host
 * leaders). Consecutive blocks whose owners are the same ranks on every host form one {@link Run}, reduced across
 * hosts among those owners in one allreduce. Every rank derives the same layout from the same hosts.
 */
public final class HostLayout {
    /** Blocks {@code [from, to)} and their owners, one generation rank per host in host order. */
    record Run(int from, int to, int[] owners) {
    }

    /** Generation ranks of each host, in rank order; hosts in the order of their lowest rank. */
    final List<int[]> hosts;
    final int blocks;
    final List<Run> runs;

    private HostLayout(List<int[]> hosts, int blocks) {
        this.hosts = hosts;
        this.blocks = blocks;
        List<Run> rs = new ArrayList<>();
        for (int b = 0; b < blocks; ) {
            int[] owners = owners(b);
            int to = b + 1;
            while (to < blocks && java.util.Arrays.equals(owners, owners(to))) {
                to++;
            }
            rs.add(new Run(b, to, owners));
            b = to;
        }
        this.runs = List.copyOf(rs);
    }

    /**
     * @param hostOfRank each generation rank's host (address)
     * @param leaders whether one rank per host carries the bytes across hosts (one block) rather than every rank its
     *        share (as many blocks as the largest host has ranks)
     * @return the layout, or null when a hierarchy gains nothing: one host, or one rank on every host
     */
    public static HostLayout of(List<String> hostOfRank, boolean leaders) {
        Map<String, List<Integer>> byHost = new LinkedHashMap<>();
        for (int r = 0; r < hostOfRank.size(); r++) {
            byHost.computeIfAbsent(hostOfRank.get(r), h -> new ArrayList<>()).add(r);
        }
        int most = 0;
        List<int[]> hosts = new ArrayList<>();
        for (List<Integer> ranks : byHost.values()) {
            hosts.add(ranks.stream().mapToInt(Integer::intValue).toArray());
            most = Math.max(most, ranks.size());
        }
        if (hosts.size() < 2 || most < 2) {
            return null;
        }
        return new HostLayout(List.copyOf(hosts), leaders ? 1 : most);
    }

    /** @return the first block local rank {@code l} of a host of {@code ranks} ranks owns ({@code l == ranks}: the end) */
    int first(int ranks, int l) {
        return (int) ((long) l * blocks / ranks);
    }

    /** @return the owner of block {@code b} on each host, as generation ranks */
    private int[] owners(int b) {
        int[] owners = new int[hosts.size()];
        for (int h = 0; h < hosts.size(); h++) {
            int[] ranks = hosts.get(h);
            int l = 0;
            while (first(ranks.length, l + 1) <= b) {
                l++;
            }
            owners[h] = ranks[l];
        }
        return owners;
    }

    /** @return the ranks of {@code rank}'s host, in rank order */
    int[] hostOf(int rank) {
        for (int[] ranks : hosts) {
            for (int r : ranks) {
                if (r == rank) {
                    return ranks;
                }
            }
        }
        throw new IllegalArgumentException("rank " + rank + " is on no host of " + hosts.size());
    }
}
