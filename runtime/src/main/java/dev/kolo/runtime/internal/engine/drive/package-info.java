/**
 * Who drives the engine and how the others wait: {@code Engine} (the current generation, the queues that feed it
 * from any thread, one step over all that is runnable, under the engine lock), {@code EngineDriver} (a caller drives
 * its own op; how the others park and are woken; completions delivered once the lock is let go; a caller that
 * leaves without its result) and {@code CollectiveThread} (drives when no caller does, opens data planes), which
 * the driver sees only as a {@code DrivingThread} to wake. It steps the generations of {@code agree} and queues
 * the ops of {@code op}; it knows nothing of the client above it.
 */
package dev.kolo.runtime.internal.engine.drive;
