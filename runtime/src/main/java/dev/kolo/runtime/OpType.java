package dev.kolo.runtime;

/** The collectives the coordinator negotiates. */
enum OpType {
    ALLREDUCE, ALLGATHER, BROADCAST, REDUCESCATTER, ALLTOALL;

    /** Ops whose dim 0 may differ between ranks. */
    boolean perRankRows() {
        return this == ALLGATHER || this == ALLTOALL;
    }

    /** Ops a joined rank can take part in (it contributes zeros). */
    boolean allowedWhileJoined() {
        return this == ALLREDUCE;
    }

    String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
