package dev.kolo.samples.launch;

import picocli.CommandLine.Option;

/** {@code -np N}, the number of local worker processes that {@code launch} and most benchmarks start. */
public final class NpOption {
    @Option(names = {"-np", "--np"}, required = true, paramLabel = "N", description = "Number of workers.")
    int np;

    /** @return N; below 1 is a usage mistake, reported in the user's terms */
    public int np() {
        if (np < 1) {
            throw new IllegalArgumentException("-np must be at least 1 (got " + np + ")");
        }
        return np;
    }
}
