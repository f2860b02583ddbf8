package dev.kolo.runtime.internal.collectives.generation;

import dev.kolo.kernels.Kernels;
import dev.kolo.runtime.internal.transport.connect.TransportOptions;
import dev.kolo.runtime.internal.transport.shm.PeerCopy;
import dev.kolo.runtime.internal.transport.shm.SharedRing;

/**
 * {@link RingCollectivesOverSharedMemoryTest} with every piece of 64 bytes or more copied into the rings past the
 * writer's caches ({@code KOLO_SHM_STREAM=always}): the streaming copy's head, whole lines and tail at every offset
 * the rings and the odd sizes make.
 */
class RingCollectivesOverStreamedSharedMemoryTest extends RingCollectivesTest {
    @Override
    TransportOptions.Builder options() {
        return TransportOptions.builder().sharedMemory(true).sharedMemoryBytes(SharedRing.MIN_CAPACITY)
                .peerCopy(new PeerCopy(Kernels.get(), PeerCopy.Mode.ALWAYS, 64));
    }

    @Override
    String transport() {
        return "shm";
    }
}
