package dev.kolo.runtime.internal.autotune;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.ToDoubleFunction;
import org.junit.jupiter.api.Test;

/** The search against known score surfaces: it finds the optimum, and a start no setting beats is kept. */
class CoordinateSearchTest {
    private static final int MIB = 1 << 20;

    /** Runs the search to its end against {@code score}; @return the setting it keeps */
    private static TunedValues run(TunedValues start, ToDoubleFunction<TunedValues> score) {
        CoordinateSearch search = new CoordinateSearch(start);
        int guard = 0;
        while (!search.done()) {
            search.record(score.applyAsDouble(search.current()));
            assertTrue(++guard < 200, "the search must end");
        }
        return search.best();
    }

    /** A separable surface peaking at fusion 32 MiB, eager 16 KiB, cycle 0, as a step's bytes per second would. */
    private static double peaked(TunedValues v) {
        double fusion = -Math.abs(Math.log(v.fusionThreshold() + 1.0) - Math.log(32.0 * MIB));
        double eager = -Math.abs(v.eagerOpBytes() - 16384) / 65536.0;
        double cycle = -v.cycleMicros() / 10_000.0;
        return 1e9 * Math.exp(fusion + eager + cycle);
    }

    @Test
    void aMistunedStartEndsAtTheOptimum() {
        TunedValues mistuned = new TunedValues(MIB, 65536, 10_000);
        assertEquals(new TunedValues(32 * MIB, 16384, 0), run(mistuned, CoordinateSearchTest::peaked));
    }

    @Test
    void aStartNothingBeatsIsKept() {
        TunedValues defaults = new TunedValues(64 * MIB, 21845, 1000); // not among the values tried
        assertEquals(defaults, run(defaults, v -> 5e8), "a flat surface: every contestant ties with the start");
    }

    @Test
    void theCycleTimeIsLeftAloneWhenNothingWentThroughTheCoordinator() {
        TunedValues mistuned = new TunedValues(MIB, 65536, 10_000);
        CoordinateSearch search = new CoordinateSearch(mistuned);
        while (!search.done()) {
            assertTrue(search.knob() != Knob.CYCLE_TIME, "the cycle time is not sampled");
            search.record(peaked(search.current()), false);
        }
        assertTrue(search.cycleSkipped());
        assertEquals(new TunedValues(32 * MIB, 16384, 10_000), search.best());
    }

    @Test
    void warmUpSamplesAreDiscardedAndTheSampleCountIsBounded() {
        TunedValues start = new TunedValues(0, 0, 0); // fusion off: a value outside the list, raced too
        CoordinateSearch search = new CoordinateSearch(start);
        for (int i = 0; i < CoordinateSearch.WARM_UP_SAMPLES; i++) {
            assertTrue(search.warmingUp());
            assertEquals(start, search.current());
            search.record(1e12); // a wild warm-up score must not count
        }
        assertTrue(!search.warmingUp());
        while (!search.done()) {
            search.record(peaked(search.current()));
        }
        assertEquals(32 * MIB, search.best().fusionThreshold(), "the warm-up's score did not keep fusion off");
        int perKnob = (1 + CoordinateSearch.FINALISTS) * CoordinateSearch.CONFIRM_SAMPLES;
        int max = CoordinateSearch.WARM_UP_SAMPLES;
        for (Knob k : Knob.values()) {
            max += k.candidates.size() + 1 + perKnob;
        }
        assertTrue(search.samples() <= max, search.samples() + " samples, at most " + max);
    }
}
