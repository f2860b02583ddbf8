package dev.kolo.samples.bench.model;

import dev.kolo.runtime.Settings;

/**
 * The α-β cost model of Kolo's collectives: a step costs α (latency of a message, the wait for a peer), a byte
 * sent on the critical path costs β (a link's time per byte), a byte reduced costs γ (the kernels' time per
 * byte of in-place add), and a collective takes
 *
 * <pre>  time = overhead + steps * (α + o * handoff) + pathBytes * β * f + pathReduced * γ * f</pre>
 *
 * where, when the ranks of one host outnumber its cores (as np 4 to 8 on this 2-core machine), f =
 * ranks / cores is the sharing of the cores' copy and add bandwidth and o = ranks / cores - 1 the ranks queued
 * on a core ahead of the peer a step waits for, each costing about a scheduler hand-off; with a core per
 * rank (every projection of a cluster) f = 1 and o = 0. The overhead is the software cost of one op (handing it
 * to the collective thread and back), paid once.
 *
 * <p>Why a model: it says which algorithm should run at which size and what a step costs at 64 to 1024 ranks,
 * which no machine here can measure; {@link CostModelFit} checks it against this machine's measurements.
 *
 * <p>The algorithm the runtime runs at each size is {@link #select}, the thresholds are the constants below (those
 * a setting moves are read from its declaration), and the agreement round's message is {@code RoundMessage}'s
 * layout: the others must match the runtime's ({@code AllreduceAlgorithms}' direct limits, {@code RoundMessage}
 * and {@code TransportOptions}' chunk size), which are internal; change them here when those change.
 */
final class CostModel {
    /** Largest allreduce run DIRECT (one contiguous buffer, at most {@link #DIRECT_MAX_RANKS} ranks). */
    static final long DIRECT_MAX_BYTES = 8 * 1024;
    static final int DIRECT_MAX_RANKS = 4;
    /** Largest allreduce run RECURSIVE_DOUBLING (one contiguous buffer, 3 or more ranks): the setting's default. */
    static final long RECURSIVE_DOUBLING_MAX_BYTES = Settings.RECURSIVE_DOUBLING_MAX_BYTES.defaultValue();
    /**
     * Largest allreduce run RABENSEIFNER (3 or more ranks), the setting's default; anything larger, and above DIRECT
     * at 2 ranks, RING.
     */
    static final long RABENSEIFNER_MAX_BYTES = Settings.RABENSEIFNER_MAX_BYTES.defaultValue();
    /** The ring's (and chain broadcast's) chunk: {@code TransportOptions.chunkBytes}, 512 KiB by default. */
    static final long RING_CHUNK_BYTES = 512 * 1024;
    /** Default {@code KOLO_FUSION_THRESHOLD}. */
    static final long FUSION_THRESHOLD = Settings.FUSION_THRESHOLD.defaultValue();

    /** How the ranks exchange an agreement round's messages. */
    enum Agreement {
        /** Before the change now being made: every rank sends its message to every other (1 step, n-1 messages). */
        ALL_TO_ALL,
        /** After it: a recursive-doubling AND/OR of the bit sets, the eager data summed along. */
        RECURSIVE_DOUBLING
    }

    final double alpha;
    final double beta;
    final double gamma;
    final double handoff;
    final double overhead;
    /** Cores of the one host every rank runs on, or 0: a host (or enough cores) per rank. */
    final int cores;
    final Agreement agreement;

    /**
     * @param alpha seconds per step (latency of a message)
     * @param beta seconds per byte sent on a link
     * @param gamma seconds per byte reduced
     * @param handoff seconds a step costs when the peer waited for is not running (ranks above cores)
     * @param overhead seconds of software cost per op
     * @param cores cores shared by all the ranks (one host), or 0 for a host per rank
     */
    CostModel(double alpha, double beta, double gamma, double handoff, double overhead, int cores,
              Agreement agreement) {
        if (!(alpha >= 0 && beta >= 0 && gamma >= 0 && handoff >= 0 && overhead >= 0) || cores < 0) {
            throw new IllegalArgumentException("the model's parameters must be 0 or more");
        }
        this.alpha = alpha;
        this.beta = beta;
        this.gamma = gamma;
        this.handoff = handoff;
        this.overhead = overhead;
        this.cores = cores;
        this.agreement = agreement;
    }

    /** A network of a host per rank: α in µs, links in gigabits per second, the add in gigabytes per second. */
    static CostModel network(double alphaMicros, double linkGbps, double reduceGBps, Agreement agreement) {
        return new CostModel(alphaMicros * 1e-6, 8 / (linkGbps * 1e9), 1 / (reduceGBps * 1e9), 0, 0, 0, agreement);
    }

    CostModel withFit(double alpha, double beta, double handoff, double overhead, int cores) {
        return new CostModel(alpha, beta, gamma, handoff, overhead, cores, agreement);
    }

    /** The allreduce algorithm the runtime runs for one contiguous buffer of {@code bytes} on {@code n} ranks. */
    static Algorithm select(int n, long bytes) {
        return select(n, bytes, true);
    }

    /**
     * The runtime's choice ({@code AllreduceAlgorithms.choose} on main): DIRECT and RECURSIVE_DOUBLING need one
     * contiguous buffer; a fused batch of several tensors' own buffers takes RABENSEIFNER or RING.
     */
    static Algorithm select(int n, long bytes, boolean contiguous) {
        if (contiguous && bytes <= DIRECT_MAX_BYTES && n <= DIRECT_MAX_RANKS) {
            return Algorithm.DIRECT;
        }
        if (n == 2) {
            return Algorithm.RING;
        }
        if (contiguous && bytes <= RECURSIVE_DOUBLING_MAX_BYTES) {
            return Algorithm.RECURSIVE_DOUBLING;
        }
        return bytes <= RABENSEIFNER_MAX_BYTES ? Algorithm.RABENSEIFNER : Algorithm.RING;
    }

    /** Sharing of the cores' bandwidth: ranks per core, at least 1. */
    double sharing(int n) {
        return cores == 0 ? 1 : Math.max(1, (double) n / cores);
    }

    /**
     * Hand-offs a step waits for: the ranks queued on a core ahead of the peer it needs, ranks / cores - 1, at
     * least 0 (fitted here: 1 - cores / ranks, the chance the peer is not running, left np 8's small ops at 0.45-0.74
     * of measured, since with more ranks per core the peer also waits longer once descheduled).
     */
    double oversubscription(int n) {
        return cores == 0 ? 0 : Math.max(0, (double) n / cores - 1);
    }

    /** Seconds of the counted work on {@code n} ranks, without the per-op overhead. */
    double seconds(int n, CollectiveCost c) {
        double f = sharing(n);
        return c.steps() * (alpha + oversubscription(n) * handoff) + c.pathBytes() * beta * f
                + c.pathReduced() * gamma * f;
    }

    /** One allreduce on the data plane alone, by the algorithm the runtime picks, with the op's overhead. */
    double allreduceSeconds(int n, long bytes) {
        return allreduceSeconds(n, bytes, true);
    }

    double allreduceSeconds(int n, long bytes, boolean contiguous) {
        return overhead + seconds(n, select(n, bytes, contiguous).of(n, bytes));
    }

    /** Largest allreduce whose data rides in an agreement round: {@code RoundMessage.eagerOpBytes}. */
    static long eagerOpBytes(int n) {
        return Math.max(8 * 1024, 64 * 1024 / Math.max(1, n - 1));
    }

    /** Most eager data in one round message: {@code RoundMessage.eagerBytes}. */
    static long eagerBudget(int n) {
        return 2 * eagerOpBytes(n);
    }

    /**
     * A round message ({@code RoundMessage}): 16-byte header, the holders set (8 bytes per 64 ranks), the ready,
     * invalid and eager id sets (each 4 bytes and its bit set, 8 bytes per 64 ids: the dense upper bound; a set of
     * few ids is shorter), eager data.
     */
    static long roundMessageBytes(int n, int cachedIds, long eagerBytes) {
        long words = (cachedIds + 63) / 64;
        return 16 + 8 * ((n + 63) / 64) + 3 * (4 + 8 * words) + eagerBytes;
    }

    /** Counts of one agreement round over {@code n} ranks with this many cached ids and eager bytes per message. */
    CollectiveCost agreementRound(int n, int cachedIds, long eagerBytes) {
        long message = roundMessageBytes(n, cachedIds, eagerBytes);
        if (n == 1) {
            return CollectiveCost.NONE;
        }
        if (agreement == Agreement.ALL_TO_ALL) {
            CollectiveCost c = Algorithm.DIRECT.of(n, message);
            double reduced = (n - 1) * (double) eagerBytes;
            return new CollectiveCost(c.steps(), c.messages(), c.bytesSent(), reduced, c.pathBytes(), reduced);
        }
        CollectiveCost c = Algorithm.RECURSIVE_DOUBLING.of(n, message);
        // Only the eager data is added (the bit sets are ANDed and ORed, a few words). Off a power of two the fold
        // is a swap both ways (the folded rank may be idle and must hear of the round), so the busiest rank sends
        // one message more than recursive doubling's: fold, log2 p steps, unfold.
        double share = message == 0 ? 0 : (double) eagerBytes / message;
        long extra = Integer.bitCount(n) == 1 ? 0 : 1;
        return new CollectiveCost(c.steps(), c.messages() + extra, c.bytesSent() + extra * message,
                c.bytesReduced() * share, c.pathBytes(), c.pathReduced() * share);
    }

    double agreementSeconds(int n, int cachedIds, long eagerBytes) {
        return overhead + seconds(n, agreementRound(n, cachedIds, eagerBytes));
    }

    /**
     * One cached allreduce of {@code bytes} as {@code bench allreduce} times it: an agreement round (one cached
     * id), which carries the data when it is small enough to be eager, else followed by the data-plane
     * allreduce.
     */
    double cachedAllreduceSeconds(int n, long bytes) {
        return overhead + seconds(n, cachedAllreduce(n, bytes));
    }

    CollectiveCost cachedAllreduce(int n, long bytes) {
        if (n == 1) {
            return CollectiveCost.NONE;
        }
        if (bytes <= eagerOpBytes(n)) {
            return agreementRound(n, 1, bytes);
        }
        return agreementRound(n, 1, 0).then(select(n, bytes).of(n, bytes));
    }

    /** Where an allreduce of {@code bytes} runs on a cached step: in the round ("EAGER") or the algorithm's name. */
    static String cachedPath(int n, long bytes) {
        return n > 1 && bytes <= eagerOpBytes(n) ? "EAGER" : select(n, bytes).name();
    }
}
