/**
 * Elastic training: {@link dev.kolo.elastic.ElasticState} holds the state that outlives a generation
 * (parameters, optimizer state, buffers, loop position), commits it, checkpoints it and makes every rank hold the
 * same bytes; {@link dev.kolo.elastic.Elastic#run} runs a training function and, after a lost worker or a change
 * of membership, rolls back to the last commit and runs it again with the new ranks.
 */
package dev.kolo.elastic;
