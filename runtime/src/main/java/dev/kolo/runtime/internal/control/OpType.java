package dev.kolo.runtime.internal.control;

/** The collectives the coordinator negotiates. */
public enum OpType {
    ALLREDUCE, ALLGATHER, BROADCAST, REDUCESCATTER, ALLTOALL;

    /** Ops whose dim 0 may differ between ranks. */
    public boolean perRankRows() {
        return this == ALLGATHER || this == ALLTOALL;
    }

    /** Ops a joined rank can take part in (it contributes zeros). */
    public boolean allowedWhileJoined() {
        return this == ALLREDUCE;
    }

    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
