package dev.kolo.runtime.internal.transport;

/**
 * One schedule in progress beside another on the op's thread ({@link Transport#runLanes}): the schedule, its two
 * links, and how far its send and receive streams have come. The two lanes of a call use disjoint links, so their
 * frames never interleave on one link; each lane's state outlives a call that returns because the other finished.
 * Reused for every schedule the lane runs: nothing is allocated per schedule.
 */
public final class Lane {
    Schedule schedule;
    Link send;
    Link recv;
    int sent;
    int received;
    boolean writing;
    boolean reading;
    boolean writeBlocked;

    /** Starts {@code s}: its sends go on {@code send}, its receives come from {@code recv}. */
    public void start(Schedule s, Link send, Link recv) {
        if (schedule != null) {
            throw new IllegalStateException("the lane still runs a schedule");
        }
        this.schedule = s;
        this.send = send;
        this.recv = recv;
        sent = 0;
        received = 0;
        writing = false;
        reading = false;
        writeBlocked = false;
    }

    /** @return whether a schedule was started and has not completed */
    public boolean busy() {
        return schedule != null;
    }

    /** @return whether every unit of the schedule has been sent and received */
    boolean complete() {
        return sent >= schedule.sendUnits && received >= schedule.recvUnits;
    }

    /** The schedule completed: the lane is free for the next. */
    void finish() {
        schedule = null;
        if (recv != null && recv.mapped != null) {
            recv.mapped.streaming();
        }
        send = null;
        recv = null;
    }

    /** A failure ended the call: the links' half-sent and half-read frames are dropped with the lane's schedule. */
    void abandon() {
        if (send != null) {
            send.out.reset();
        }
        if (recv != null) {
            recv.in.reset();
        }
        finish();
    }
}
