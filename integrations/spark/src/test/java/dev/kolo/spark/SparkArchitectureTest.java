package dev.kolo.spark;

import dev.kolo.testing.ModuleLimits;
import java.util.List;
import java.util.Set;

/** The Spark integration held to the limits every module keeps ({@link ModuleLimits}). */
class SparkArchitectureTest extends ModuleLimits {
    @Override
    protected List<Module> modules() {
        return List.of(new Module(".", "dev.kolo.spark", "dev.kolo.spark", Set.of()));
    }
}
