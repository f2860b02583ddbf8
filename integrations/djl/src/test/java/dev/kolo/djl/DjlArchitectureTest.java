package dev.kolo.djl;

import dev.kolo.testing.ModuleLimits;
import java.util.List;
import java.util.Set;

/** The DJL integration held to the limits every module keeps ({@link ModuleLimits}). */
class DjlArchitectureTest extends ModuleLimits {
    @Override
    protected List<Module> modules() {
        return List.of(new Module(".", "dev.kolo.djl", "dev.kolo.djl", Set.of()));
    }
}
