package dev.kolo.samples.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/** A run's rate is the median of the sample's samples/s lines after the first, which includes the warm-up. */
class BenchCeilingRateTest {
    private static String line(int step, double rate) {
        return "epoch 1 step " + step + "/468 samples/s " + rate + " loss 0.5 lr 0.01";
    }

    @Test
    void theFirstIntervalIsLeftOutAndTheMedianTaken() {
        assertEquals(5000, BenchCeilingCommand.rate(List.of(line(25, 100), line(50, 5000), "a log line",
                line(75, 7000), line(100, 4000))));
        assertEquals(4500, BenchCeilingCommand.rate(List.of(line(25, 100), line(50, 5000), line(75, 4000))));
    }

    @Test
    void tooFewLinesSayWhatToGive() {
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> BenchCeilingCommand.rate(List.of(line(25, 100))));
        assertTrue(e.getMessage().contains("--max-steps"), e.getMessage());
    }
}
