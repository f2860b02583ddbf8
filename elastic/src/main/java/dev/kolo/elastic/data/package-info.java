/**
 * Which samples each rank trains on, epoch after epoch, in a job whose size may change:
 * {@link dev.kolo.elastic.data.ElasticSampler} splits every epoch's shuffled order among the ranks of the moment,
 * step by step, and keeps its position (the epoch, and how many samples of it the job has taken) where an
 * {@link dev.kolo.elastic.ElasticState} commits and checkpoints it, so that after a lost worker, an admitted one or
 * a restart from a checkpoint the rest of the epoch is trained exactly once. {@link dev.kolo.elastic.data.BatchSplit}
 * says how a step's global batch is shared among the ranks. Framework-free: the DJL integration's
 * {@code DistributedSampler} is built on it, and a loop of plain Java uses it directly.
 */
package dev.kolo.elastic.data;
