/**
 * Shared-memory segments between ranks of one host: the file under {@code /dev/shm} that one rank of a pair creates
 * (mode 0600, its pages allocated up front) and the other maps after the authenticated handshake named it, the
 * layout of its two rings, its removal as soon as both have mapped it, and the sweep of segments whose creator died
 * before that. The bytes themselves move through {@link dev.kolo.runtime.internal.transport.SharedMemoryWire}.
 */
package dev.kolo.runtime.internal.transport.shm;
