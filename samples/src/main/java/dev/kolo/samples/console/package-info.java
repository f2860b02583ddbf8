/**
 * What long-running commands print while they work: {@link dev.kolo.samples.console.Progress}, a line at a
 * fixed interval in logs and pipes, a bar redrawn in place on an interactive terminal. Depends on nothing
 * else of Kolo; soak, chaos and the command line use it.
 */
package dev.kolo.samples.console;
