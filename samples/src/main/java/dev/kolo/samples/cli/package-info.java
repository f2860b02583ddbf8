/**
 * The command line of {@code worker.jar}: the entry point {@link dev.kolo.samples.cli.WorkerCli}, the worker,
 * {@code launch}, {@code checkpoint} and the {@code bench} parent command that lists the benchmarks. The top
 * of the samples: depends on the runtime, checkpoint, elastic, mnist, launch and the command classes of bench,
 * chaos and soak; nothing depends on it.
 */
package dev.kolo.samples.cli;
