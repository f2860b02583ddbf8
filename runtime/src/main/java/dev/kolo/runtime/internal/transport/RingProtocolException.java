package dev.kolo.runtime.internal.transport;

import dev.kolo.runtime.WorkerLostException;

/**
 * A peer sent a frame other than the one the agreed op calls for (wrong generation, op sequence, chunk or
 * length): the ranks disagree on what they are doing. The generation is aborted like for a lost worker.
 */
public final class RingProtocolException extends WorkerLostException {
    private static final long serialVersionUID = 1L;

    public RingProtocolException(String message, int peerRank, String peerHost) {
        super(message, peerRank, peerHost);
    }
}
