/**
 * The rank side of an op, from submit to result. Reaches the coordinator through {@code ControlChannel}, so it
 * depends neither on membership nor on the coordinator's negotiation (the fusion rule both apply is
 * {@code control.FusionPlan}).
 *
 * <ul>
 *   <li>What the worker sees: {@code CollectiveClient} (submit, await, the ops in flight by name, generations
 *       assigned and ended), {@code PendingOp} (a submitted op, which is also its future: a waiter drives the
 *       engine), {@code Deadlines}.
 *   <li>Who drives: {@code Engine} (the current generation, the queues that feed it, one step over all that is
 *       runnable, under the engine lock), {@code EngineDriver} (a caller drives its own op; how the others park
 *       and are woken; completions delivered once the lock is let go), {@code CollectiveThread} (drives when no
 *       caller does, opens data planes).
 *   <li>One generation: {@code RankGeneration} (its state and the order of the steps),
 *       {@code TensorCache} (the specs every rank holds alike), {@code WaitingTensors} (cached tensors waiting
 *       for a round), {@code AgreementRound} and its wire layout {@code RoundMessage}, {@code ResponseLog}
 *       (coordinator responses held until every rank holds them), {@code CoordinatorRequests} (what was asked
 *       and is re-sent until answered).
 *   <li>Execution: {@code BatchExecutor} (runs what was agreed, records its phases), {@code CollectiveOps}
 *       (one batch as data-plane calls, the fusion buffer), {@code EagerReduction} (small allreduces from the
 *       round's own bytes), {@code AverageScaling}.
 * </ul>
 */
package dev.kolo.runtime.internal.engine;
