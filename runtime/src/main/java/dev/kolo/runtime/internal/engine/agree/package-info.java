/**
 * One generation on this rank and how its ranks agree on what runs: {@code RankGeneration} (its state and the
 * order of the steps, and the parts it makes for them), {@code TensorCache} (the specs every rank holds alike),
 * {@code WaitingTensors} (cached tensors waiting for a round), {@code AgreementRound} with its wire layout
 * {@code RoundMessage} and combination {@code RoundRule}, {@code ResponseLog} (coordinator responses held until
 * every rank holds them), {@code CoordinatorRequests} (what was asked and is re-sent until answered, through
 * {@code ToCoordinator}), and {@code Tuning} (the knobs in force, and rank 0's next values, carried in the round).
 * What was agreed runs in {@code execute}; finished ops and an ended generation are reported through
 * {@code RankGeneration.Completion}, which the client implements.
 */
package dev.kolo.runtime.internal.engine.agree;
