package dev.kolo.checkpoint;

import dev.kolo.testing.ModuleLimits;
import java.util.List;
import java.util.Set;

/** The checkpoint module held to the limits every module keeps ({@link ModuleLimits}). */
class CheckpointArchitectureTest extends ModuleLimits {
    @Override
    protected List<Module> modules() {
        return List.of(new Module(".", "dev.kolo.checkpoint", "dev.kolo.checkpoint", Set.of()));
    }
}
