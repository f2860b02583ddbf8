package dev.kolo.samples.launch;

import dev.kolo.runtime.Setting;

/**
 * The ports {@code launch} gives the workers of one host: the launcher's own value of a port setting is the first
 * worker's, and each further worker of that host takes the next, so that the workers of a host never collide and a
 * firewall between hosts can open one known range per host.
 */
final class HostPorts {
    private HostPorts() {
    }

    /**
     * @param perHost the most workers any host runs
     * @param zero    what 0 means for this setting (to name it in the error), or null if 0 is not a value
     * @return the first worker's port: the launcher's value of {@code setting}, else its default
     * @throws IllegalArgumentException if the last worker's port would pass 65535, naming the highest base that fits
     */
    static int base(Setting<Integer> setting, int perHost, String zero) {
        int base = setting.fromEnvironment().orElse(setting.defaultValue());
        if (base != 0 && base + perHost - 1 > 65535) {
            throw new IllegalArgumentException(setting.name() + " " + base + " leaves no port for worker "
                    + (perHost - 1) + " of a host (launch gives a host's worker i the port " + base + " + i): use at most "
                    + (65536 - perHost) + (zero == null ? "" : ", or 0 " + zero));
        }
        return base;
    }

    /** @return the port of worker {@code index} of its host, 0 staying 0 */
    static int of(int base, int index) {
        return base == 0 ? 0 : base + index;
    }
}
