package dev.kolo.elastic.data;

/**
 * The batch shares that let ranks of unequal speed finish a step together: each rank's share of the global batch in
 * proportion to its speed (samples per second), every share from 1 to its cap, the shares summing to the global
 * batch. A pure function of the ranks' measured costs, so every rank computes the same shares from the same figures.
 */
final class ShareBalance {
    private ShareBalance() {
    }

    /**
     * @param costs nanoseconds each rank takes per sample (each above 0)
     * @param total the global batch, at least one sample per rank and at most the caps' sum
     * @param caps  the largest share each rank may take
     * @return the shares, largest remainders rounded up, then moved from capped ranks to the fastest uncapped
     */
    static int[] proportional(double[] costs, int total, int[] caps) {
        int n = costs.length;
        double speedSum = 0;
        for (double c : costs) {
            speedSum += 1 / c;
        }
        int[] shares = new int[n];
        double[] remainder = new double[n];
        int given = 0;
        for (int r = 0; r < n; r++) {
            double exact = total * (1 / costs[r]) / speedSum;
            shares[r] = Math.max(1, Math.min(caps[r], (int) Math.floor(exact)));
            remainder[r] = exact - shares[r];
            given += shares[r];
        }
        while (given < total) { // the largest remainder (the rank most short of its exact share) takes one more
            int best = -1;
            for (int r = 0; r < n; r++) {
                if (shares[r] < caps[r] && (best < 0 || remainder[r] > remainder[best])) {
                    best = r;
                }
            }
            if (best < 0) {
                throw new IllegalArgumentException("the caps sum to less than the global batch of " + total);
            }
            shares[best]++;
            remainder[best]--;
            given++;
        }
        while (given > total) { // floors of 1 can overshoot: the rank most over its exact share gives one back
            int worst = -1;
            for (int r = 0; r < n; r++) {
                if (shares[r] > 1 && (worst < 0 || remainder[r] < remainder[worst])) {
                    worst = r;
                }
            }
            shares[worst]--;
            remainder[worst]++;
            given--;
        }
        return shares;
    }

    /** @return the time of a step with these shares: the slowest rank's, its share times its cost */
    static double stepTime(int[] shares, double[] costs) {
        double t = 0;
        for (int r = 0; r < shares.length; r++) {
            t = Math.max(t, shares[r] * costs[r]);
        }
        return t;
    }
}
