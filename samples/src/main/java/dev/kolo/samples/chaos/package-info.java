/**
 * {@code bench chaos}: the fault-injection suite. Its scenarios run the sample job as worker processes, inject one
 * fault each (signals, crashes, network partitions and bad links in network namespaces) and check the workers'
 * output and checkpoints. Depends on the checkpoint module and on the launch package only.
 */
package dev.kolo.samples.chaos;
