package dev.kolo.checkpoint;

import dev.kolo.runtime.ModuleSettings;
import dev.kolo.runtime.Setting;
import java.nio.file.Path;

/**
 * The checkpoint module's settings, each declared once as a {@code public static final} {@link Setting} field.
 * The runtime's registry ({@link dev.kolo.runtime.Settings#all()}) finds this class through
 * {@code META-INF/services}, so a worker's environment reader checks them, the worker has their flags and the
 * README's table lists them; this module reads them with {@link Setting#fromEnvironment()}.
 */
public final class CheckpointSettings implements ModuleSettings {
    public static final Setting<Path> CHECKPOINT_DIR = Setting.named("KOLO_CHECKPOINT_DIR", Path::of)
            .flag("--checkpoint-dir").accepts("a directory path", v -> true)
            .describe("where checkpoints are written and a restarted job resumes from");

    /** For {@link java.util.ServiceLoader} only: the settings are the static fields. */
    public CheckpointSettings() {
    }

    @Override
    public String module() {
        return "checkpoint";
    }
}
