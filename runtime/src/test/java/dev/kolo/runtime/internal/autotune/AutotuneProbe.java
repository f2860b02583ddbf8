package dev.kolo.runtime.internal.autotune;

/** For tests outside this package: how many samples the search spends on the last knob. */
public final class AutotuneProbe {
    private AutotuneProbe() {
    }

    /** @return the cycle time's samples: every value once, then the finalists' confirmations */
    public static int cycleSamples() {
        return Knob.CYCLE_TIME.candidates.size() + (1 + CoordinateSearch.FINALISTS) * CoordinateSearch.CONFIRM_SAMPLES;
    }
}
