package dev.kolo.samples.mnist;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class ShardSamplerTest {

    /** The examples an epoch has used are a prefix of its permutation, however the size changed on the way. */
    @Test
    void stepsUseAPrefixOfThePermutationAcrossResizes() {
        int count = 1000;
        int batch = 7;
        int passes = 2;
        int[] sizes = {3, 3, 2, 2, 2, 4, 1, 3};
        Set<Integer> used = new HashSet<>();
        long position = 0;
        int[] reference = null;
        for (int size : sizes) {
            for (int rank = 0; rank < size; rank++) {
                ShardSampler s = new ShardSampler(count, rank, size, 42);
                s.shuffle(5);
                if (reference == null) {
                    reference = s.order().clone();
                }
                assertEquals(java.util.Arrays.toString(reference), java.util.Arrays.toString(s.order()),
                        "every rank and size shares the permutation");
                for (int pass = 0; pass < passes; pass++) {
                    int from = s.batchStart(position, pass, batch);
                    for (int i = from; i < from + batch; i++) {
                        assertTrue(used.add(s.order()[i]), "example used twice at size " + size);
                    }
                }
            }
            position += (long) size * batch * passes;
            Set<Integer> prefix = new HashSet<>();
            for (int i = 0; i < position; i++) {
                prefix.add(reference[i]);
            }
            assertEquals(prefix, used, "the used examples are the first " + position + " of the permutation");
        }
    }
}
