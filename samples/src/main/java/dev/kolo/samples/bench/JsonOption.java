package dev.kolo.samples.bench;

import picocli.CommandLine.Option;

/** {@code --json}: results as one JSON object per line instead of a table. */
final class JsonOption {
    @Option(names = "--json", description = "One JSON object per line.")
    boolean json;
}
