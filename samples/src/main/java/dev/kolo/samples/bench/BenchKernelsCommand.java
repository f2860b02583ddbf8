package dev.kolo.samples.bench;

import dev.kolo.samples.launch.JsonOption;
import dev.kolo.samples.launch.KoloVersion;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

/** {@code bench kernels}: reduction and conversion bandwidth, native and Java, beside a memory-copy baseline. */
@Command(name = "kernels", description = "GB/s of the reduction kernels (native and Java) and a copy baseline.",
        mixinStandardHelpOptions = true, versionProvider = KoloVersion.class)
public final class BenchKernelsCommand implements Callable<Integer> {
    @Mixin
    JsonOption output = new JsonOption();

    @Override
    public Integer call() {
        KernelBenchmark.run(System.out, output.json());
        return 0;
    }
}
