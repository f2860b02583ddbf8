/**
 * {@code bench soak}: training-like steps for minutes over N worker processes, every result checked and each
 * rank's memory, threads and file descriptors compared against a growth budget. Depends on the runtime and on
 * the launch package only.
 */
package dev.kolo.samples.soak;
