package dev.kolo.elastic;

import dev.kolo.testing.ModuleLimits;
import java.util.List;
import java.util.Set;

/** The elastic module held to the limits every module keeps ({@link ModuleLimits}). */
class ElasticArchitectureTest extends ModuleLimits {
    @Override
    protected List<Module> modules() {
        return List.of(new Module(".", "dev.kolo.elastic", "dev.kolo.elastic", Set.of()));
    }
}
