package dev.kolo.runtime.internal.transport;

/**
 * How a wait of the op's thread spends the time before it parks (Agrona's {@code IdleStrategy}): it polls for a while
 * after the last progress, spinning on the core or yielding it, then the caller parks in its selector. Polling saves
 * the wake-up of a parked thread (tens of microseconds) but spinning steals the CPU a peer on the same core needs to
 * produce what is waited for (measured: 2-3x slower at np 4 on 2 cores): spin only when every rank on the host has a
 * core of its own, else yield the core while polling, after the first {@link #spinFirstNanos} of each wait.
 */
final class IdleStrategy {
    /**
     * Largest op that polls when ranks share cores and some link is a socket. Above it the waits are for the kernel
     * to copy bulk data, and a rank that polls takes the core its peers need for exactly that (measured at np 4 on 2
     * cores over TCP: 64 MiB busbw 0.78 GB/s polling, 1.22 parking).
     */
    static final long SHARED_POLL_MAX_BYTES = 1 << 20;

    /** How long a wait polls after the last progress before it parks; 0 parks at once. */
    private volatile long spinNanos;
    /** The polling time of the op in progress: {@link #spinNanos}, or 0 for a bulk op when ranks share cores. */
    private long opSpinNanos;
    /** Poll by yielding the core (ranks outnumber cores) rather than by spinning on it. */
    private volatile boolean yieldWhilePolling;
    /** While yielding, the first nanoseconds of each wait spin all the same (each rank has a core of its own). */
    private volatile long spinFirstNanos;
    /**
     * Every link is mapped memory: the peers copy their bytes themselves, so a rank that polls takes nothing the
     * kernel needs, and bulk ops poll as small ones do (measured at np 2 and 4 on 2 cores: 1-64 MiB 10-30% faster
     * than parking at once).
     */
    private boolean onlyMapped = true;

    /** A link joined the generation; {@code mapped}: its bytes move through mapped memory. */
    void linkAdded(boolean mapped) {
        onlyMapped &= mapped;
    }

    /** Sets how long waits poll before parking, and how (see the class). */
    void configure(long spinNanos, boolean yield, long spinFirstNanos) {
        this.spinNanos = Math.max(0, spinNanos);
        this.yieldWhilePolling = yield;
        this.spinFirstNanos = Math.max(0, spinFirstNanos);
        this.opSpinNanos = this.spinNanos;
    }

    /** The next op moves about {@code bytes}: it polls or parks accordingly (on the op thread). */
    void beginOp(long bytes) {
        opSpinNanos = yieldWhilePolling && bytes > SHARED_POLL_MAX_BYTES && !onlyMapped ? 0 : spinNanos;
    }

    /**
     * One step of a wait {@code waited} nanoseconds after the last progress: polls once while the wait is within its
     * polling time. A wait on mapped links alone ({@code socketWait} false) polls even in a bulk op of a generation
     * with sockets (a hierarchical allreduce's phases within a host): no kernel copy needs the core.
     *
     * @return true when it polled; false when the polling time is over and the caller must park
     */
    boolean poll(long waited, boolean socketWait) {
        if (waited >= (socketWait ? opSpinNanos : spinNanos)) {
            return false;
        }
        if (yieldWhilePolling && waited >= spinFirstNanos) {
            Thread.yield();
        } else {
            Thread.onSpinWait();
        }
        return true;
    }
}
