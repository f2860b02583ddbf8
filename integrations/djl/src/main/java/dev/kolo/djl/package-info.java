/**
 * Kolo for Deep Java Library (DJL) models: {@link dev.kolo.djl.DistributedTrainer} averages the gradients of a
 * DJL model over every worker of a Kolo job and applies them, as {@code horovod.torch}'s
 * {@code DistributedOptimizer} does for PyTorch. Depends on DJL's API only; the application brings the engine
 * (PyTorch, with its native library). The runtime never depends on this module.
 */
package dev.kolo.djl;
