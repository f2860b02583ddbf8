package dev.kolo.runtime.internal.engine;

/**
 * How a thread that owns the engine polls its peers before it parks, from the ranks on this host and its cores:
 * MPI's rule (spin unless ranks outnumber cores), with the collective thread as the exception when the ranks fill
 * the cores.
 *
 * <ul>
 *   <li>Ranks outnumber the cores: every poll yields the core, since a spinner takes the core a peer needs to
 *       answer.</li>
 *   <li>Each rank has a core: a caller blocked in its own op spins, as an MPI rank does (its thread has nothing
 *       else to do), and the collective thread yields: it runs beside the program's compute, which needs the
 *       rank's core. Measured at np 2 on 2 cores ({@code bench allreduce}, 4 B over shared memory): 6.6 and 7.8
 *       us with callers spinning against 12.0 and 23.5 us with every thread yielding.</li>
 *   <li>Cores to spare: every poll spins.</li>
 * </ul>
 *
 * @param everyThreadYields      every wait yields the core at each poll
 * @param collectiveThreadYields the collective thread's waits yield even when the callers' spin
 */
record PollingRule(boolean everyThreadYields, boolean collectiveThreadYields) {
    static PollingRule of(int localRanks, int cores) {
        return new PollingRule(localRanks > cores, localRanks == cores);
    }
}
