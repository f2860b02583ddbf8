package dev.kolo.checkpoint.internal;

import dev.kolo.checkpoint.CheckpointException;
import dev.kolo.checkpoint.CheckpointImage;
import dev.kolo.checkpoint.CheckpointState;
import dev.kolo.checkpoint.InFlightPolicy;
import dev.kolo.checkpoint.SaveResult;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * Snapshots a state into the reused staging buffer on the caller's thread, then writes it on one
 * background thread. At most one save is in flight; what a second save does meanwhile is the
 * {@link InFlightPolicy}.
 */
public final class AsyncSaver implements AutoCloseable {
    /** Writes a snapshotted image to the stores; runs on the writer thread. */
    public interface Writer {
        SaveResult write(CheckpointImage image, long startNanos, long blockingNanos) throws Exception;
    }

    private final StagingBuffer staging = new StagingBuffer();
    private final ExecutorService thread;
    private final Duration timeout;
    private CompletableFuture<SaveResult> inFlight = CompletableFuture.completedFuture(null);
    private boolean closed;

    public AsyncSaver(String threadName, Duration timeout) {
        this.timeout = timeout;
        this.thread = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, threadName);
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * @param image makes the image of {@code state} from the staged copy of its tensors (one slice per
     *     tensor, in order); runs on the caller's thread, as part of the time the caller is blocked
     * @param after housekeeping run on the writer thread once the save's future has completed (retention);
     *     the next save waits for it like for a save in flight
     * @return the save's future, or empty if a save is in flight and the policy is {@link InFlightPolicy#SKIP}
     *     (the caller makes the skipped result: {@link SaveResult} has no public constructor)
     */
    public synchronized Optional<CompletableFuture<SaveResult>> save(CheckpointState state, InFlightPolicy policy,
            Function<List<ByteBuffer>, CheckpointImage> image, Writer writer, Runnable after) {
        checkOpen();
        long start = System.nanoTime();
        if (!inFlight.isDone()) {
            if (policy == InFlightPolicy.SKIP) {
                return Optional.empty();
            }
            awaitInFlight("cannot save " + state.id());
            start = System.nanoTime();
        }
        List<ByteBuffer> slices = staging.stage(state.tensors().values(), timeout);
        CheckpointImage snapshot = image.apply(slices);
        long blocking = System.nanoTime() - start;
        CompletableFuture<SaveResult> f = new CompletableFuture<>();
        CompletableFuture<SaveResult> busy = new CompletableFuture<>();
        long started = start;
        thread.execute(() -> {
            try {
                f.complete(writer.write(snapshot, started, blocking));
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
        return Optional.of(f.copy());
    }

    /** Runs {@code task} on the writer thread after what is in flight; later saves wait for it. */
    public synchronized void background(Runnable task) {
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
    public synchronized void awaitInFlight(String what) {
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

    public long stagingCapacity() {
        return staging.capacity();
    }

    /** @throws IllegalStateException if closed */
    public synchronized void checkOpen() {
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
