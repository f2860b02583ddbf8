/**
 * {@code bench chaos}: the fault-injection suite. Its scenarios run the sample job as worker processes, inject one
 * fault each (signals, crashes, network partitions and bad links in network namespaces) and check the workers'
 * output and checkpoints. Depends on the checkpoint module and on cli's entry point and parent watch only.
 */
package dev.kolo.samples.chaos;
