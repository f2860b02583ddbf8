package dev.kolo.testing;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Waiting for a condition in a test, with a deadline that only guards it, and what a waiting thread is doing. */
public final class Conditions {
    /** How long a condition may take before the test fails: a guard against a hang, never the property tested. */
    public static final long GUARD_SECONDS = 30;

    private Conditions() {
    }

    /** Polls {@code condition} until it holds; fails with {@code failure} after {@link #GUARD_SECONDS}. */
    public static void await(BooleanSupplier condition, String failure) throws InterruptedException {
        await(condition, () -> failure);
    }

    /** As {@link #await(BooleanSupplier, String)}, the message made when it fails. */
    public static void await(BooleanSupplier condition, Supplier<String> failure) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(GUARD_SECONDS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail(failure.get());
            }
            Thread.sleep(5); // polling a condition, bounded by the deadline
        }
    }

    /** @return whether {@code t} waits in a Kolo collective (drives or parks in the engine's client) */
    public static boolean inKolosWait(Thread t) {
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getClassName().endsWith("CollectiveClient") && e.getMethodName().equals("drive")) {
                return true;
            }
        }
        return false;
    }
}
