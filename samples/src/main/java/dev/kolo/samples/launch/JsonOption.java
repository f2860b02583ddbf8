package dev.kolo.samples.launch;

import picocli.CommandLine.Option;

/** {@code --json}: results as one JSON object per line instead of a table; a mixin of the benchmarks. */
public final class JsonOption {
    @Option(names = "--json", description = "One JSON object per line.")
    boolean json;

    /** @return whether {@code --json} was given */
    public boolean json() {
        return json;
    }
}
