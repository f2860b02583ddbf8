/**
 * The checkpoint benchmark, {@code worker.jar bench checkpoint DIR}: saves and restores through the public
 * {@code Checkpointer}, as an application would, and compares with plain file I/O of the same bytes on the
 * same disk. Uses the module's internals to read back what it wrote; nothing in the module depends on it.
 */
package dev.kolo.checkpoint.bench;
