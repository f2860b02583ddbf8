/**
 * What Kolo's own checkpoint and elastic modules need of a worker beyond the public API: its cluster member
 * (the in-memory checkpoint replica, the elastic blacklist) and the workers the cluster saw leave (the stop
 * message of a fixed job). Internal, not API: it may change in any release, and the architecture tests keep
 * every module but checkpoint and elastic out.
 *
 * <p>Those modules hold only the {@code Kolo} facade, so {@code WorkerRegistry} maps a facade object to its
 * wired worker. It takes the facade as an {@code Object}: this package never imports {@code Kolo}, so the
 * facade reaches it without an import circle (the wired worker registers itself under its facade). It
 * depends on no other internal package.
 */
package dev.kolo.runtime.internal.access;
