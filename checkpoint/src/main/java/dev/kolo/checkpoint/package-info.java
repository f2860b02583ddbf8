/**
 * Checkpoints of a training job, the API a training program uses: {@link dev.kolo.checkpoint.Checkpointer}
 * with the state, id and result types it takes and returns, the store extension point
 * ({@link dev.kolo.checkpoint.CheckpointStore}) and {@link dev.kolo.checkpoint.CheckpointTool}, the CLI.
 * Depends on {@code dev.kolo.runtime} and this module's {@code internal} packages, which no other module
 * should import: they change without notice.
 */
package dev.kolo.checkpoint;
