package dev.kolo.runtime.internal.collectives.schedule;

/**
 * How the log-step algorithms run on any number of ranks (as MPI's recursive doubling and Rabenseifner's
 * algorithm do): with {@code p} the largest power of two not above {@code size} and {@code rem = size - p}, the
 * first {@code 2 rem} ranks pair up, each even rank handing its data to the odd rank after it (the "fold"), so
 * that {@code p} ranks take part in the {@code log2 p} steps; at the end each odd rank hands the result back
 * (the "unfold"). A taking-part rank's number among the {@code p} is its <em>group rank</em>; the mapping keeps
 * the ranks' order, so consecutive group ranks own consecutive ranks.
 */
public final class PowerOfTwoGroup {
    final int size;
    final int rank;
    /** The largest power of two not above {@link #size}. */
    public final int p;
    /** Ranks beyond {@link #p}: the first {@code 2 rem} ranks fold in pairs. */
    final int rem;
    /** This rank's number among the {@link #p} that take part, or -1 when it folded its data into the next rank. */
    public final int groupRank;

    public PowerOfTwoGroup(int size, int rank) {
        this.size = size;
        this.rank = rank;
        this.p = Integer.highestOneBit(size);
        this.rem = size - p;
        this.groupRank = rank < 2 * rem ? (rank % 2 == 1 ? rank / 2 : -1) : rank - rem;
    }

    /** @return whether this rank pairs up in the fold (and the unfold): then its partner is {@link #foldPartner()} */
    public boolean folds() {
        return rank < 2 * rem;
    }

    /** @return whether this rank hands its data to the next rank and sits out the steps */
    public boolean foldedAway() {
        return groupRank < 0;
    }

    /** @return the rank this one pairs with in the fold: the next one for an even rank, the previous for an odd */
    public int foldPartner() {
        return rank % 2 == 0 ? rank + 1 : rank - 1;
    }

    /** @return the rank whose group rank is {@code g} */
    public int rankOf(int g) {
        return g < rem ? 2 * g + 1 : g + rem;
    }

    /** @return the first rank whose data group rank {@code g} holds after the fold (up to {@link #endRankOf}) */
    public int firstRankOf(int g) {
        return g < rem ? 2 * g : g + rem;
    }

    /** @return one past the last rank whose data group rank {@code g} holds after the fold */
    public int endRankOf(int g) {
        return rankOf(g) + 1;
    }

    /** @return log2 {@link #p}: the number of steps between the fold and the unfold */
    public int steps() {
        return Integer.numberOfTrailingZeros(p);
    }
}
