/**
 * Who may talk to whom: keys derived from the job secret, authenticated control messages (tag, receiver,
 * replay window) and the TLS material shared by the event bus and the data plane: {@code JobKeys},
 * {@code AuthenticatingCodec}, {@code ControlAuthenticator}, {@code ReplayWindow}, {@code TlsMaterial}. The
 * design and the wire formats: docs/dev/design/security.md.
 */
package dev.kolo.runtime.internal.security;
