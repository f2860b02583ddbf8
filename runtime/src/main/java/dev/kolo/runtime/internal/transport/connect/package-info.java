/**
 * How a generation's connections are made (Gloo's device and context): the worker's
 * {@link dev.kolo.runtime.internal.transport.connect.Endpoint} accepts on the data port for the worker's life,
 * the authenticated handshake admits peers of the same job, generation and rank, and
 * {@link dev.kolo.runtime.internal.transport.connect.PeerLinks} holds one generation's links (ring neighbours,
 * and with 4 or more ranks every other pair). Uses the transport; knows no collective.
 */
package dev.kolo.runtime.internal.transport.connect;
