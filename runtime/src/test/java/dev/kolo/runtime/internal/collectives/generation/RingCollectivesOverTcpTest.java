package dev.kolo.runtime.internal.collectives.generation;

import dev.kolo.runtime.internal.transport.connect.TransportOptions;

/** {@link RingCollectivesTest} with every link on TCP, as between hosts (shared memory off). */
class RingCollectivesOverTcpTest extends RingCollectivesTest {
    @Override
    TransportOptions.Builder options() {
        return TransportOptions.builder().sharedMemory(false);
    }

    @Override
    String transport() {
        return "tcp";
    }
}
