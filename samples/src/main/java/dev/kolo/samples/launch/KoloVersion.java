package dev.kolo.samples.launch;

import picocli.CommandLine;

/** Version shown by {@code --version}: the artifact's, from the jar manifest; every command names it. */
public final class KoloVersion implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
        String v = KoloVersion.class.getPackage().getImplementationVersion();
        return new String[] {"kolo " + (v == null ? "development build" : v)};
    }
}
