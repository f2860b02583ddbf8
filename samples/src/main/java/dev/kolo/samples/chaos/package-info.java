/**
 * {@code bench chaos}: the fault-injection suite. Its scenarios run the sample job as worker processes, inject one
 * fault each (signals, crashes, network partitions and bad links in network namespaces) and check the workers'
 * output and checkpoints (the namespaces are {@code netns}'s). Depends on the checkpoint module and on the launch,
 * console and netns packages only: it starts the worker by its main class, not through the cli package above it.
 */
package dev.kolo.samples.chaos;
