package dev.kolo.runtime.internal.security;

import java.util.Arrays;

/**
 * The counters already accepted from one sender session: a counter is accepted once, if it is newer than
 * the newest seen or within the last {@value #SIZE} of it (messages of one sender may be decoded slightly
 * out of order when they go to different verticles of this node). Older or repeated ones are replays.
 */
final class ReplayWindow {
    static final int SIZE = 1024;
    private final byte[] sessionNonce;
    private final long[] seen = new long[SIZE / 64];
    private long newest;

    ReplayWindow(byte[] sessionNonce) {
        this.sessionNonce = sessionNonce.clone();
    }

    /** @return true when {@code nonce} is this session's */
    boolean sameSession(byte[] nonce) {
        return Arrays.equals(sessionNonce, nonce);
    }

    /** @return true and records {@code counter} if it was not accepted before; counters start at 1 */
    synchronized boolean accept(long counter) {
        if (counter <= 0) {
            return false;
        }
        if (counter > newest) {
            long shift = counter - newest;
            if (shift >= SIZE) {
                Arrays.fill(seen, 0);
            } else {
                for (long c = newest + 1; c < counter; c++) {
                    clear(c); // slots of counters skipped so far, reused from SIZE ago
                }
            }
            newest = counter;
            set(counter);
            return true;
        }
        if (newest - counter >= SIZE || isSet(counter)) {
            return false;
        }
        set(counter);
        return true;
    }

    private void set(long c) {
        int bit = (int) (c % SIZE);
        seen[bit >>> 6] |= 1L << (bit & 63);
    }

    private void clear(long c) {
        int bit = (int) (c % SIZE);
        seen[bit >>> 6] &= ~(1L << (bit & 63));
    }

    private boolean isSet(long c) {
        int bit = (int) (c % SIZE);
        return (seen[bit >>> 6] & (1L << (bit & 63))) != 0;
    }
}
