package dev.kolo.runtime.internal.flight;

import java.util.Arrays;

/**
 * One op as a flight recorder's file has it: what it was (name, op, dtype, shape, bytes, process set), which of
 * this rank's submits of its name it was ({@code occurrence}: the same op has the same one on every rank), how it
 * ran (algorithm, transport) and when it was submitted, agreed, started and finished, in wall-clock microseconds
 * (0: not reached). {@code error} is the failure's message when it failed.
 */
public record FlightRecord(long seq, String name, int occurrence, String op, String dtype, long[] shape, long bytes,
                           int set, long generation, String algorithm, String transport, FlightRecord.State state,
                           long submittedUs, long agreedUs, long startedUs, long finishedUs, String error) {
    /** What an op was doing: the last moment recorded. */
    public enum State { SUBMITTED, AGREED, RUNNING, FINISHED, FAILED }

    /** @return whether it finished or failed */
    public boolean done() {
        return state == State.FINISHED || state == State.FAILED;
    }

    /** @return what must be equal on every rank for the same op: op, dtype and shape (dim 0 apart for allgather, alltoall) */
    public String signature() {
        long[] s = shape;
        if ((op.equals("allgather") || op.equals("alltoall")) && s.length > 0) {
            s = s.clone();
            s[0] = -1;
        }
        return op + " " + dtype + " " + Arrays.toString(s).replace("-1", "*");
    }

    /** @return the op as a person reads it: 'name' #occurrence (set s) */
    public String label() {
        return "'" + name + "' #" + occurrence + (set == 0 ? "" : " of process set " + set);
    }

    /** @return what identifies the op across ranks */
    public String key() {
        return set + "/" + name + "#" + occurrence;
    }

    /** @return how long this rank spent on it, from submit to finish (or to {@code untilUs} if it is in flight) */
    public long waitedUs(long untilUs) {
        return (finishedUs != 0 ? finishedUs : untilUs) - submittedUs;
    }
}
