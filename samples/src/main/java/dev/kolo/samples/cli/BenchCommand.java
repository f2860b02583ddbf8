package dev.kolo.samples.cli;

import dev.kolo.samples.bench.BenchAllocCommand;
import dev.kolo.samples.bench.BenchAllreduceCommand;
import dev.kolo.samples.bench.BenchCeilingCommand;
import dev.kolo.samples.bench.BenchCheckpointCommand;
import dev.kolo.samples.bench.BenchElasticCommand;
import dev.kolo.samples.bench.BenchJitterCommand;
import dev.kolo.samples.bench.BenchKernelsCommand;
import dev.kolo.samples.bench.BenchScalingCommand;
import dev.kolo.samples.bench.BenchStepCommand;
import dev.kolo.samples.bench.BenchStragglerCommand;
import dev.kolo.samples.bench.BenchTensorsCommand;
import dev.kolo.samples.bench.model.BenchModelCommand;
import dev.kolo.samples.chaos.BenchChaosCommand;
import dev.kolo.samples.launch.KoloVersion;
import dev.kolo.samples.soak.BenchSoakCommand;
import picocli.CommandLine.Command;

/** {@code bench}: the benchmarks; each prints JSON lines with {@code --json}. */
@Command(name = "bench", description = "Benchmarks (see each subcommand's --help).",
        mixinStandardHelpOptions = true, versionProvider = KoloVersion.class,
        subcommands = {BenchKernelsCommand.class, BenchAllreduceCommand.class, BenchScalingCommand.class,
                BenchElasticCommand.class, BenchSoakCommand.class, BenchChaosCommand.class, BenchTensorsCommand.class,
                BenchCheckpointCommand.class, BenchJitterCommand.class, BenchAllocCommand.class,
                BenchModelCommand.class, BenchStepCommand.class, BenchStragglerCommand.class,
                BenchCeilingCommand.class})
final class BenchCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(),
                "name a benchmark: kernels, allreduce, scaling, tensors, elastic, soak, chaos, checkpoint, jitter, "
                        + "alloc, model, step, straggler or ceiling");
    }
}
