package dev.kolo.checkpoint.internal.format;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntConsumer;

/**
 * Runs independent tasks on the calling thread plus up to (cores - 1) helpers from the common pool. The
 * caller claims tasks too, so a busy pool only slows things down, never stalls them.
 */
public final class Parallel {
    private Parallel() {
    }

    public static void forEach(int tasks, IntConsumer task, Duration timeout) {
        if (tasks <= 0) {
            return;
        }
        int helpers = Math.min(tasks - 1, Runtime.getRuntime().availableProcessors() - 1);
        if (helpers <= 0) {
            for (int i = 0; i < tasks; i++) {
                task.accept(i);
            }
            return;
        }
        AtomicInteger next = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(tasks);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Runnable worker = () -> {
            for (int i = next.getAndIncrement(); i < tasks; i = next.getAndIncrement()) {
                try {
                    if (failure.get() == null) {
                        task.accept(i);
                    }
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                } finally {
                    done.countDown();
                }
            }
        };
        for (int h = 0; h < helpers; h++) {
            ForkJoinPool.commonPool().execute(worker);
        }
        worker.run();
        try {
            if (!done.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IllegalStateException("parallel tasks did not finish within " + timeout);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for parallel tasks", e);
        }
        Throwable t = failure.get();
        if (t instanceof RuntimeException re) {
            throw re;
        }
        if (t instanceof Error err) {
            throw err;
        }
        if (t != null) {
            throw new IllegalStateException(t);
        }
    }
}
