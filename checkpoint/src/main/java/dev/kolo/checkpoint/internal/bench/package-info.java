/**
 * The checkpoint benchmark, a program of its own: saves and restores through the public {@code Checkpointer}
 * and compares with plain file I/O. Apart from the other internal packages because it uses the API's
 * builder, as an application would; nothing depends on it.
 */
package dev.kolo.checkpoint.internal.bench;
