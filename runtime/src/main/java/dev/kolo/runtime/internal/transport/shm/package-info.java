/**
 * Everything of shared memory between ranks of one host, behind the wire seam
 * ({@link dev.kolo.runtime.internal.transport.MappedWire}): the segment one rank of a pair creates under
 * {@code /dev/shm} (mode 0600, its pages allocated up front) and the other maps after the authenticated handshake
 * named it ({@link dev.kolo.runtime.internal.transport.shm.SharedSegment}), its two rings
 * ({@link dev.kolo.runtime.internal.transport.shm.SharedRing}), the wire over them
 * ({@link dev.kolo.runtime.internal.transport.shm.SharedMemoryWire}), the upgrade of co-located connections onto
 * it ({@link dev.kolo.runtime.internal.transport.shm.SharedMemoryUpgrade}), and the sweep of segments whose creator
 * died before it removed their name. The frames and the pump see only the seam.
 */
package dev.kolo.runtime.internal.transport.shm;
