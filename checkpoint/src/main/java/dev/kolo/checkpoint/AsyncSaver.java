package dev.kolo.checkpoint;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Snapshots a state into the reused staging buffer on the caller's thread, then writes it on one
 * background thread. At most one save is in flight; what a second save does meanwhile is the
 * {@link InFlightPolicy}.
 */
final class AsyncSaver implements AutoCloseable {
    /** Writes a snapshotted image to the stores; runs on the writer thread. */
    interface Writer {
        SaveResult write(CheckpointImage image, long startNanos, long blockingNanos) throws Exception;
    }

    private final StagingBuffer staging = new StagingBuffer();
    private final ExecutorService thread;
    private final Duration timeout;
    private CompletableFuture<SaveResult> inFlight = CompletableFuture.completedFuture(null);
    private boolean closed;

    AsyncSaver(String threadName, Duration timeout) {
        this.timeout = timeout;
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * @param after housekeeping run on the writer thread once the save's future has completed (retention);
     *     the next save waits for it like for a save in flight
     */
    synchronized CompletableFuture<SaveResult> save(CheckpointState state, String job, InFlightPolicy policy,
            Writer writer, Runnable after) {
        checkOpen();
        long start = System.nanoTime();
        if (!inFlight.isDone()) {
            if (policy == InFlightPolicy.SKIP) {
                return CompletableFuture.completedFuture(
                        SaveResult.skipped(SaveResult.Status.SKIPPED_IN_FLIGHT, state.id()));
            }
            awaitInFlight("cannot save " + state.id());
            start = System.nanoTime();
        }
        List<ByteBuffer> slices = staging.stage(state.tensors().values(), timeout);
        CheckpointImage image = CheckpointImage.of(state, job, slices);
        long blocking = System.nanoTime() - start;
        CompletableFuture<SaveResult> f = new CompletableFuture<>();
        CompletableFuture<SaveResult> busy = new CompletableFuture<>();
        long started = start;
        thread.execute(() -> {
            try {
                f.complete(writer.write(image, started, blocking));
            } catch (Throwable t) {
                f.completeExceptionally(t);
            } finally {
                try {
                    after.run();
                } finally {
                    busy.complete(null);
                }
            }
        });
        inFlight = busy;
        return f.copy();
    }

    /** Runs {@code task} on the writer thread after what is in flight; later saves wait for it. */
    synchronized void background(Runnable task) {
        checkOpen();
        awaitInFlight("cannot schedule checkpoint housekeeping");
        CompletableFuture<SaveResult> busy = new CompletableFuture<>();
        thread.execute(() -> {
            try {
                task.run();
            } finally {
                busy.complete(null);
            }
        });
        inFlight = busy;
    }

    /** Waits for the save in flight, if any; its failure was reported through its own future. */
    synchronized void awaitInFlight(String what) {
        try {
            inFlight.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException e) {
            // reported to whoever holds that save's future
        } catch (TimeoutException e) {
            throw new CheckpointException(what + ": the previous save is still being written after " + timeout
                    + " (a hung disk or replica?); raise the save timeout or check the storage");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CheckpointException(what + ": interrupted while waiting for the previous save", e);
        }
    }

    synchronized boolean busy() {
        return !inFlight.isDone();
    }

    long stagingCapacity() {
        return staging.capacity();
    }

    /** @throws IllegalStateException if closed */
    synchronized void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the checkpointer is closed");
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            awaitInFlight("closing the checkpointer");
        } finally {
            thread.shutdown();
            try {
                thread.awaitTermination(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
