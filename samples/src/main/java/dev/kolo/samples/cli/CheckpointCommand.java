package dev.kolo.samples.cli;

import dev.kolo.checkpoint.CheckpointTool;
import dev.kolo.samples.launch.KoloVersion;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code checkpoint ls|inspect|verify DIR}: read checkpoints without the job running. */
@Command(name = "checkpoint", description = "Lists, prints and verifies checkpoints on disk.",
        mixinStandardHelpOptions = true, versionProvider = KoloVersion.class,
        subcommands = {CheckpointCommand.Ls.class, CheckpointCommand.Inspect.class, CheckpointCommand.Verify.class})
final class CheckpointCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "name an action: ls, inspect or verify");
    }

    @Command(name = "ls", description = "Lists the checkpoints in DIR with their steps and sizes.",
            mixinStandardHelpOptions = true)
    static final class Ls implements Callable<Integer> {
        @Parameters(paramLabel = "DIR", description = "Checkpoint directory (KOLO_CHECKPOINT_DIR).")
        Path dir;

        @Override
        public Integer call() {
            return new CheckpointTool().ls(dir, System.out, System.err);
        }
    }

    @Command(name = "inspect", description = "Prints a checkpoint's manifest (the newest in DIR, or the one named).",
            mixinStandardHelpOptions = true)
    static final class Inspect implements Callable<Integer> {
        @Parameters(paramLabel = "PATH", description = "Checkpoint directory, one checkpoint, or its manifest.json.")
        Path path;

        @Override
        public Integer call() {
            return new CheckpointTool().inspect(path, System.out, System.err);
        }
    }

    @Command(name = "verify", description = "Verifies every checksum; exits non-zero on any corruption.",
            mixinStandardHelpOptions = true)
    static final class Verify implements Callable<Integer> {
        @Parameters(paramLabel = "DIR", description = "Checkpoint directory.")
        Path dir;

        @Override
        public Integer call() {
            return new CheckpointTool().verify(dir, System.out, System.err);
        }
    }
}
