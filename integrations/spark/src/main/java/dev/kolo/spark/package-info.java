/**
 * Kolo on Apache Spark: {@link dev.kolo.spark.KoloDistributor} runs a training function on every rank of a Kolo
 * job inside one barrier-mode stage, as PySpark's {@code TorchDistributor} does for PyTorch, optionally with each
 * rank's share of a {@code Dataset}.
 *
 * <p><b>Rendezvous.</b> Rank r is the barrier task of partition r. Each task picks a free port on its executor's
 * host (the address Spark's scheduler knows the executor by), the tasks exchange {@code host:port} with
 * {@code BarrierTaskContext.allGather}, and each starts its worker with {@code members} discovery over exactly
 * those addresses, asking for its partition as rank. The job's name carries a random id of the run and the stage's
 * attempt, so the tasks of a retried stage form a new job and never meet those of a failed one.
 *
 * <p><b>The job secret.</b> The driver generates 32 random bytes for every run and puts them in the function the
 * stage's tasks run: Spark serializes it into the task binary, held in memory by the driver and the executors
 * and sent over Spark's RPC. Nothing shows or logs a task binary. The alternatives do show: a conf entry or an
 * executor environment variable is on the UI's Environment page and in the event log, a local property
 * ({@code setLocalProperty}) is in every job-start and stage-submitted event, and a broadcast variable would work
 * too but adds a block to manage for no gain. Spark's RPC is plain text unless {@code spark.network.crypto.enabled}
 * (with {@code spark.authenticate}) is on: turn it on where the network between executors is not trusted.
 *
 * <p><b>Resources.</b> One task per rank: a run needs {@code numProcesses} task slots at once, and fails at once
 * with the numbers when the cluster has fewer. Several ranks may share an executor JVM (an executor with several
 * cores); Kolo's CPU binding is off, since it would bind the whole executor process. Each rank's worker (threads,
 * ports, shared memory) is closed when its task ends, failed or not.
 */
package dev.kolo.spark;
