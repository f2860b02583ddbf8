/**
 * Who may talk to whom: keys derived from the job secret, authenticated control messages (tag, receiver,
 * replay window) and the TLS material shared by the event bus and the data plane.
 */
package dev.kolo.runtime.internal.security;
