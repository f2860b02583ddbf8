package dev.kolo.elastic.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The shares a rebalance picks: in proportion to the speeds, each from 1 to its cap, summing to the global batch. */
class ShareBalanceTest {
    private static final int[] NO_CAP = {1000, 1000, 1000};

    @Test
    void sharesFollowTheSpeeds() {
        assertArrayEquals(new int[] {32, 32, 32}, ShareBalance.proportional(new double[] {5, 5, 5}, 96, NO_CAP));
        assertArrayEquals(new int[] {36, 36, 24}, ShareBalance.proportional(new double[] {2, 2, 3}, 96, NO_CAP));
        assertArrayEquals(new int[] {48, 47, 1}, ShareBalance.proportional(new double[] {1, 1, 1000}, 96, NO_CAP));
    }

    @Test
    void aCapSendsTheRestToTheOthers() {
        assertArrayEquals(new int[] {40, 40, 16}, ShareBalance.proportional(new double[] {1, 1, 10}, 96,
                new int[] {40, 40, 40}));
    }

    @Test
    void everySplitSumsToTheGlobalBatchWithinItsBounds() {
        Random random = new Random(7);
        for (int i = 0; i < 10_000; i++) {
            int n = 1 + random.nextInt(6);
            double[] costs = new double[n];
            int[] caps = new int[n];
            int total = n + random.nextInt(200);
            int capSum = 0;
            for (int r = 0; r < n; r++) {
                costs[r] = 1e-3 + random.nextDouble() * (random.nextBoolean() ? 1 : 1000);
                caps[r] = Math.max(1, 2 * total / n);
                capSum += caps[r];
            }
            if (capSum < total) {
                continue;
            }
            int[] shares = ShareBalance.proportional(costs, total, caps);
            String what = Arrays.toString(costs) + " of " + total + " capped " + Arrays.toString(caps) + ": "
                    + Arrays.toString(shares);
            assertEquals(total, Arrays.stream(shares).sum(), what);
            for (int r = 0; r < n; r++) {
                assertTrue(shares[r] >= 1 && shares[r] <= caps[r], what);
            }
        }
    }
}
