/**
 * The command line of {@code worker.jar}: the entry point {@link dev.kolo.samples.cli.WorkerCli}, the worker, {@code
 * launch}, {@code checkpoint} and the {@code bench} parent command, and the local process tools they share
 * ({@link dev.kolo.samples.cli.LocalLauncher}, {@link dev.kolo.samples.cli.ParentWatch}, the {@code -np} option).
 * Depends on the runtime, checkpoint, elastic and mnist; of bench, chaos and soak only on their command classes.
 */
package dev.kolo.samples.cli;
