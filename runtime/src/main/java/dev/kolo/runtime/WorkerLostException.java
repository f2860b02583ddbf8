package dev.kolo.runtime;

/**
 * A peer died, stopped answering, or the ring of the current generation was aborted. Raised on every
 * surviving rank for every pending collective, within seconds and never after a hang.
 */
public class WorkerLostException extends KoloException {
    private static final long serialVersionUID = 1L;
    private final int lostRank;
    private final String lostHost;

    /**
     * @param message what was lost and when
     * @param lostRank rank of the lost worker in the aborted generation, or -1 if unknown
     * @param lostHost host of the lost worker, or {@code null} if unknown
     */
    public WorkerLostException(String message, int lostRank, String lostHost) {
        super(message);
        this.lostRank = lostRank;
        this.lostHost = lostHost;
    }

    /** @return rank of the lost worker in the aborted generation, or -1 if unknown */
    public int lostRank() {
        return lostRank;
    }

    /** @return host of the lost worker, or {@code null} if unknown */
    public String lostHost() {
        return lostHost;
    }
}
