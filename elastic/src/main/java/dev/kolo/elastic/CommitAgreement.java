package dev.kolo.elastic;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.Tensor;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What the ranks of an elastic job agree on at a commit, with one tiny allreduce (the maximum of two
 * flags): whether the membership changes here (workers wait to join, or one asked to leave) and whether it
 * is a leave. Each rank learns of a joiner or a leave request at its own moment; agreeing at a commit makes
 * every rank see the change at the same commit, so all stop there together and nobody rolls back.
 *
 * @param changes some rank saw a pending membership change or a leave request
 * @param leaves some rank asked to leave
 */
record CommitAgreement(boolean changes, boolean leaves) {
    /** The allreduce's op name: the same at every commit. */
    static final String OP = "kolo.elastic.commit";

    /** In a job that is not elastic the membership never changes at a commit: nothing to agree on. */
    private static final CommitAgreement FIXED = new CommitAgreement(false, false);

    /**
     * Agrees with the other ranks; collective in an elastic job (every rank commits at the same point).
     *
     * @param leaveRequested whether this worker asked to leave
     * @throws dev.kolo.runtime.WorkerLostException if a worker is lost during the allreduce
     */
    static CommitAgreement reach(Kolo kolo, AtomicBoolean leaveRequested) {
        if (!kolo.config().elastic()) {
            return FIXED;
        }
        boolean leaving = leaveRequested.get();
        Tensor mine = Tensor.of(new int[] {kolo.membershipChangePending() || leaving ? 1 : 0, leaving ? 1 : 0}, 2);
        int[] flags = kolo.allreduce(OP, mine, ReduceOp.MAX).toIntArray();
        return new CommitAgreement(flags[0] != 0, flags[1] != 0);
    }

    /**
     * @param commit the commit just taken
     * @param self whether this worker is the one leaving
     * @return the exception every rank throws at this commit when {@link #changes()}
     */
    MembershipChangedException changed(Kolo kolo, long commit, boolean self) {
        return new MembershipChangedException("membership changes at commit " + commit + " of generation "
                + kolo.generation() + (leaves ? " (a worker leaves" + (self ? ": this one)" : ")")
                : " (workers join)"), self);
    }
}
