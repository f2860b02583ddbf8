package dev.kolo.runtime.internal.dataplane;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import org.junit.jupiter.api.Test;

/** Which CPUs each local rank takes: contiguous equal shares, blocks of ranks where they outnumber the CPUs. */
class CpuBindingShareTest {
    private static final int[] TWO = {0, 1};
    private static final int[] EIGHT_SPARSE = {2, 3, 4, 5, 8, 9, 10, 11};

    @Test
    void equalContiguousShares() {
        assertArrayEquals(new int[] {0}, CpuBinding.share(TWO, 0, 2));
        assertArrayEquals(new int[] {1}, CpuBinding.share(TWO, 1, 2));
        assertArrayEquals(new int[] {2, 3, 4, 5}, CpuBinding.share(EIGHT_SPARSE, 0, 2));
        assertArrayEquals(new int[] {8, 9, 10, 11}, CpuBinding.share(EIGHT_SPARSE, 1, 2));
    }

    @Test
    void unevenSharesCoverEveryCpuOnce() {
        // 8 CPUs, 3 ranks: 2, 3 and 3 CPUs.
        assertArrayEquals(new int[] {2, 3}, CpuBinding.share(EIGHT_SPARSE, 0, 3));
        assertArrayEquals(new int[] {4, 5, 8}, CpuBinding.share(EIGHT_SPARSE, 1, 3));
        assertArrayEquals(new int[] {9, 10, 11}, CpuBinding.share(EIGHT_SPARSE, 2, 3));
    }

    @Test
    void ranksThatOutnumberTheCpusShareThemInBlocks() {
        assertArrayEquals(new int[] {0}, CpuBinding.share(TWO, 0, 4));
        assertArrayEquals(new int[] {0}, CpuBinding.share(TWO, 1, 4));
        assertArrayEquals(new int[] {1}, CpuBinding.share(TWO, 2, 4));
        assertArrayEquals(new int[] {1}, CpuBinding.share(TWO, 3, 4));
        assertArrayEquals(new int[] {0}, CpuBinding.share(TWO, 0, 3));
        assertArrayEquals(new int[] {0}, CpuBinding.share(TWO, 1, 3));
        assertArrayEquals(new int[] {1}, CpuBinding.share(TWO, 2, 3));
    }

    @Test
    void aRankAloneOnItsHostTakesThemAll() {
        assertArrayEquals(EIGHT_SPARSE, CpuBinding.share(EIGHT_SPARSE, 0, 1));
    }
}
