package dev.kolo.samples.bench.model;

/**
 * The collective algorithms the runtime has or is getting, each with its counts as functions of the number of
 * ranks n and the bytes B of the vector ({@link CollectiveCost}). Only counting lives here; what a step or a
 * byte costs, and which algorithm runs at which size, is {@link CostModel}'s.
 *
 * <p>For the recursive algorithms p is the largest power of two not above n and r = n - p: when r > 0, a
 * pre-step (ranks below 2r: each even one sends its whole vector to the odd one above it, which reduces it)
 * leaves p ranks, and a post-step (each odd one sends the result back to its even partner) ends it.
 */
enum Algorithm {
    /** Every rank sends its whole vector to every peer, then reduces the n vectors locally: one hop. */
    DIRECT {
        @Override
        CollectiveCost cost(int n, double bytes) {
            double out = (n - 1) * bytes;
            return new CollectiveCost(1, n - 1, out, out, out, out);
        }
    },
    /** log2 p exchanges of the whole vector with the partner at distance 1, 2, 4, ... (and the pre/post steps). */
    RECURSIVE_DOUBLING {
        @Override
        CollectiveCost cost(int n, double bytes) {
            int p = powerOfTwoBelow(n);
            int lg = log2(p);
            boolean rest = n > p;
            int steps = lg + (rest ? 2 : 0);
            // The busiest rank is an odd one below 2r: it receives in the pre-step, exchanges lg times and sends
            // the result back in the post-step.
            long messages = lg + (rest ? 1 : 0);
            double reduced = lg * bytes + (rest ? bytes : 0);
            return new CollectiveCost(steps, messages, messages * bytes, reduced, steps * bytes, reduced);
        }
    },
    /**
     * Recursive-halving reduce-scatter (log2 p steps sending B/2, B/4, ..., B/p: B(p-1)/p in all), then
     * recursive-doubling allgather (log2 p steps, the same bytes back), with the pre/post steps of B each.
     */
    RABENSEIFNER {
        @Override
        CollectiveCost cost(int n, double bytes) {
            int p = powerOfTwoBelow(n);
            int lg = log2(p);
            boolean rest = n > p;
            double phase = bytes * (p - 1) / p;
            int steps = 2 * lg + (rest ? 2 : 0);
            long messages = 2L * lg + (rest ? 1 : 0);
            double sent = 2 * phase + (rest ? bytes : 0);
            double reduced = phase + (rest ? bytes : 0);
            return new CollectiveCost(steps, messages, sent, reduced, 2 * phase + (rest ? 2 * bytes : 0), reduced);
        }
    },
    /**
     * Reduce-scatter then allgather around the ring: 2(n-1) steps of one block (B/n) each, so 2(n-1)/n B sent
     * and (n-1)/n B reduced. Each block travels in chunks of {@link CostModel#RING_CHUNK_BYTES}, so messages
     * count chunks; a chunk's latency overlaps the transfer of the chunk before, so only the 2(n-1) steps pay α.
     */
    RING {
        @Override
        CollectiveCost cost(int n, double bytes) {
            int steps = 2 * (n - 1);
            double sent = 2.0 * (n - 1) / n * bytes;
            double reduced = (double) (n - 1) / n * bytes;
            return new CollectiveCost(steps, steps * chunks(bytes / n), sent, reduced, sent, reduced);
        }
    },
    /** Ring allgather of a result of B bytes (each rank's share B/n): n-1 steps, (n-1)/n B sent, nothing reduced. */
    RING_ALLGATHER {
        @Override
        CollectiveCost cost(int n, double bytes) {
            double sent = (double) (n - 1) / n * bytes;
            return new CollectiveCost(n - 1, (n - 1) * chunks(bytes / n), sent, 0, sent, 0);
        }
    },
    /**
     * Chain broadcast, pipelined in chunks: the root's B bytes pass rank to rank, so the last rank has them
     * n-1 steps after the first chunk left, and the path is B plus the fill (n-2 chunks).
     */
    CHAIN_BROADCAST {
        @Override
        CollectiveCost cost(int n, double bytes) {
            double fill = (n - 2) * Math.min(bytes, CostModel.RING_CHUNK_BYTES);
            return new CollectiveCost(n - 1, chunks(bytes), bytes, 0, bytes + fill, 0);
        }
    };

    /** Counts for n ranks and a vector of {@code bytes}; nothing at all for one rank. */
    final CollectiveCost of(int n, double bytes) {
        if (n < 1 || bytes < 0) {
            throw new IllegalArgumentException("need n >= 1 and bytes >= 0 (got n " + n + ", bytes " + bytes + ")");
        }
        return n == 1 ? CollectiveCost.NONE : cost(n, bytes);
    }

    abstract CollectiveCost cost(int n, double bytes);

    static int powerOfTwoBelow(int n) {
        return Integer.highestOneBit(n);
    }

    static int log2(int powerOfTwo) {
        return Integer.numberOfTrailingZeros(powerOfTwo);
    }

    private static long chunks(double bytes) {
        return Math.max(1, (long) Math.ceil(bytes / CostModel.RING_CHUNK_BYTES));
    }
}
