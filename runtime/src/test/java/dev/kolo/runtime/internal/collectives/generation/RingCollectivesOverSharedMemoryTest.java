package dev.kolo.runtime.internal.collectives.generation;

import dev.kolo.runtime.internal.transport.connect.TransportOptions;
import dev.kolo.runtime.internal.transport.shm.SharedRing;

/**
 * {@link RingCollectivesTest} with every link through shared memory (the ranks share 127.0.0.1), on the smallest
 * rings a setting allows: four 16 KiB frames fill one, so the large cases wrap around it thousands of times and
 * writers wait for room.
 */
class RingCollectivesOverSharedMemoryTest extends RingCollectivesTest {
    @Override
    TransportOptions.Builder options() {
        return TransportOptions.builder().sharedMemory(true).sharedMemoryBytes(SharedRing.MIN_CAPACITY);
    }

    @Override
    String transport() {
        return "shm";
    }
}
