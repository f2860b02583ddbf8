package dev.kolo.runtime.internal.transport;

/**
 * What one collective sends and receives on a pair of links, as two ordered streams of frames ("units").
 * Both ends derive the same streams from the agreed op, so no sizes travel except in the checked headers.
 * The transport interleaves the two streams as the sockets allow; a send may depend on earlier receives.
 */
public abstract class Schedule {
    protected int sendUnits;
    protected int recvUnits;

    /** @return whether send unit {@code u} may go once {@code received} receive units are complete */
    protected abstract boolean sendReady(int u, int received);

    /** Points the writer at send unit {@code u}'s payload. */
    protected abstract void beginSend(int u, FrameWriter w, long generation, long seq);

    /** Points the reader at receive unit {@code u}'s destination. */
    protected abstract void beginRecv(int u, FrameReader r);

    /** Receive unit {@code u} arrived and was checked: reduce it, scale it, or nothing. */
    protected void received(int u) {
    }

    /** Even split of {@code total} items into {@code parts}: start of part {@code i}. */
    public static long split(long total, int parts, int i) {
        return total * i / parts;
    }

    public static int mod(int a, int n) {
        int m = a % n;
        return m < 0 ? m + n : m;
    }
}
