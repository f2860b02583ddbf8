package dev.kolo.runtime.internal.transport.connect;

import java.util.List;
import java.util.Objects;

/**
 * Where a rank's data plane listens, as agreed by the control plane for one generation.
 *
 * @param host host name or address the peer's data port is reachable on
 * @param port the peer's data port
 */
public record PeerAddress(String host, int port) {
    /** Validates the address. */
    public PeerAddress {
        Objects.requireNonNull(host, "host");
        if (port <= 0 || port > 65535) {
            throw new IllegalArgumentException("data port out of range: " + port);
        }
    }

    /** @return whether {@code peer} runs on {@code rank}'s host (the same address: the same pod or machine) */
    static boolean colocated(List<PeerAddress> peers, int rank, int peer) {
        return peer != rank && peers.get(peer).host().equals(peers.get(rank).host());
    }

    @Override
    public String toString() {
        return host + ":" + port;
    }
}
