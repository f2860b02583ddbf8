package dev.kolo.runtime.internal.wiring;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kolo.runtime.internal.control.WorkerInfo;
import java.util.List;
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

    /**
     * Which ranks of a host split a set of CPUs: those given the same set. Under a static CPU manager each container
     * of a pod has CPUs of its own, and its rank shares them with no one; ranks of one machine (or whose CPUs are
     * unknown) share them all; ranks of another host never count.
     */
    @Test
    void onlyTheRanksGivenTheSameCpusShareThem() {
        WorkerInfo a = worker(0, "10.0.0.1", 0, 2, "2-3");
        WorkerInfo b = worker(1, "10.0.0.1", 1, 2, "4-5");
        WorkerInfo elsewhere = worker(2, "10.0.0.2", 0, 1, "2-3");
        List<WorkerInfo> pod = List.of(a, b, elsewhere);
        assertEquals(List.of(a), CpuBinding.sharingCpus(a, pod));
        assertEquals(List.of(b), CpuBinding.sharingCpus(b, pod));
        WorkerInfo c = worker(1, "10.0.0.1", 1, 2, "2-3");
        assertEquals(List.of(a, c), CpuBinding.sharingCpus(c, List.of(c, a, elsewhere)), "in order of local rank");
        WorkerInfo unknown = worker(1, "10.0.0.1", 1, 2, "");
        assertEquals(List.of(a, unknown), CpuBinding.sharingCpus(a, List.of(a, unknown)));
    }

    private static WorkerInfo worker(int rank, String host, int localRank, int localSize, String cpus) {
        return new WorkerInfo("node-" + rank, host, 7070, 0, 100 + rank, -1, rank, localRank, localSize, cpus);
    }
}
