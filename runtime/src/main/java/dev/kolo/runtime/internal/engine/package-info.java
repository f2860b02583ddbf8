/**
 * The rank side of an op, from submit to result, in stages that each use only the ones after them: the client
 * here, then {@code drive}, {@code agree}, {@code execute}, and {@code op} (the op itself, which all of them hold).
 * This package holds what the rest of the worker sees and what wires the stages: {@code CollectiveClient}
 * (submit, await, the ops in flight by name, generations assigned and ended, the process sets' clients), which
 * makes the engine, its driver and its thread and is where every finished op and ended generation is reported;
 * {@code Generations} (each generation made with its settings, its tuning and the way to the coordinator); and
 * {@code ControlChannel}, what the engine needs of the cluster, so that the engine depends neither on membership
 * nor on the coordinator's negotiation (the fusion rule both apply is {@code control.FusionPlan}).
 */
package dev.kolo.runtime.internal.engine;
