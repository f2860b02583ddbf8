package dev.kolo.runtime.internal.collectives;

import java.util.Locale;

/** How allreduces span hosts that hold several ranks ({@code KOLO_HIERARCHICAL}); see {@code algorithm.HierarchicalAllreduce}. */
public enum Hierarchy {
    /** Within each host, then across hosts with each rank carrying its share of the bytes, then within each host. */
    AUTO,
    /** The same phases with one rank per host carrying all the bytes across hosts (a ring of host leaders). */
    LEADERS,
    /** One flat set of ranks: the ring (or the other algorithms by size) over every rank. */
    OFF;

    /** @return the value of a {@code KOLO_HIERARCHICAL} setting: auto, leaders or off */
    public static Hierarchy of(String setting) {
        return valueOf(setting.toUpperCase(Locale.ROOT));
    }
}
