/**
 * Membership: the Hazelcast and Vert.x node ({@code ClusterNode}), the worker and coordinator verticles,
 * rendezvous, rank assignment and generations. Uses the control wire, security, negotiation and the
 * rank-side engine; nothing below it depends on membership.
 */
package dev.kolo.runtime.internal.cluster;
