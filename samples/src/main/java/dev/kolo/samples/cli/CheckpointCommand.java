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
        subcommands = {CheckpointCommand.Ls.class, CheckpointCommand.Inspect.class, CheckpointCommand.Verify.class,
                CheckpointCommand.Export.class})
final class CheckpointCommand implements Runnable {
    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "name an action: ls, inspect, verify or export");
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

    @Command(name = "export", mixinStandardHelpOptions = true,
            description = "Writes the tensors of the newest valid checkpoint in DIR (the trained parameters and the "
                    + "optimizer's state) to OUT, one NumPy .npy file per tensor, for NumPy, PyTorch or DJL.")
    static final class Export implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "DIR", description = "Checkpoint directory (KOLO_CHECKPOINT_DIR).")
        Path dir;

        @Parameters(index = "1", paramLabel = "OUT", description = "Directory to write the .npy files to.")
        Path out;

        @Override
        public Integer call() throws java.io.IOException {
            if (!java.nio.file.Files.isDirectory(dir)) {
                throw new IllegalArgumentException("no checkpoint directory " + dir);
            }
            try (dev.kolo.checkpoint.Checkpointer reader = dev.kolo.checkpoint.Checkpointer.builder().directory(dir)
                    .writer(false).build()) {
                dev.kolo.checkpoint.RestoredCheckpoint r = reader.restoreLatest().orElseThrow(() ->
                        new IllegalArgumentException("no checkpoint in " + dir));
                java.nio.file.Files.createDirectories(out);
                java.util.Set<String> written = new java.util.HashSet<>();
                for (java.util.Map.Entry<String, dev.kolo.runtime.Tensor> e : r.state().tensors().entrySet()) {
                    String file = NpyExport.fileName(e.getKey());
                    if (!written.add(file)) {
                        throw new IllegalArgumentException("tensors '" + e.getKey() + "' and another map to the "
                                + "same file " + file + ": export them with a program (Checkpointer.restoreLatest)");
                    }
                    NpyExport.write(e.getValue(), out.resolve(file));
                    System.out.printf("%s %s %s -> %s%n", e.getKey(), e.getValue().dtype(),
                            java.util.Arrays.toString(e.getValue().shape()), out.resolve(file));
                }
                System.out.printf("exported %d tensors of checkpoint %s (step %d) to %s%n", written.size(), r.id(),
                        r.state().step(), out);
            }
            return 0;
        }
    }
}
