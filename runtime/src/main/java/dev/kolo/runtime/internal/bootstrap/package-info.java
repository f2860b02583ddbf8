/**
 * The bootstrap of one worker: what {@code Kolo.init} does before it hands back a handle, and what the handle
 * closes. {@code WorkerBootstrap} checks the job's security and kernels ({@code Preflight}), binds the data
 * plane's port, starts the metrics, joins the cluster ({@code ClusterNode}), deploys the worker verticle,
 * starts the health server and waits for the first assignment ({@code Rendezvous}, whose timeout message
 * {@code RendezvousTimeout} says who is missing); if any step fails it closes what the earlier ones started.
 * The result is a {@code WiredWorker}: the parts of a running worker in one object, closed in one place, which
 * the {@code Kolo} facade holds and delegates to (and registers with {@code internal.access} for Kolo's other
 * modules). {@code Regroup} is the elastic rejoin's wait for a new generation.
 *
 * <p>It lives apart from the facade so that {@code Kolo} is the API alone; nothing here uses {@code Kolo}.
 * It wires the other internal packages (cluster, engine, wiring, observability, security) and is used by
 * none of them.
 */
package dev.kolo.runtime.internal.bootstrap;
