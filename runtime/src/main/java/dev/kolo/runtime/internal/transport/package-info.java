/**
 * The transport (Gloo's pairs and buffers): a {@link dev.kolo.runtime.internal.transport.Link} per peer over a
 * {@link dev.kolo.runtime.internal.transport.Wire} (plain TCP, TLS, or a
 * {@link dev.kolo.runtime.internal.transport.MappedWire}: the seam to shared memory, which lives in
 * {@code transport.shm}), checked frames
 * ({@link dev.kolo.runtime.internal.transport.FrameWriter}, {@link dev.kolo.runtime.internal.transport.FrameReader}),
 * and the {@link dev.kolo.runtime.internal.transport.Transport} whose {@code FramePump} pumps a
 * {@link dev.kolo.runtime.internal.transport.Schedule}'s frames on the calling thread (its waits poll as an
 * {@code IdleStrategy} says; a failure's lost rank is named by {@code PeerLoss}). A schedule is the seam
 * to the collectives: they say which frames go where, the transport moves them. Knows no collective, no dtype
 * arithmetic and nothing of the control plane; how connections are made lives in {@code transport.connect}.
 */
package dev.kolo.runtime.internal.transport;
