package dev.kolo.runtime.internal.ring;

import java.io.IOException;
import java.nio.channels.ServerSocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

/** n ranks as threads of this JVM, each with its own data plane on 127.0.0.1, and a formed ring. */
final class TestRings implements AutoCloseable {
    interface RankTask<T> {
        T run(int rank, Ring ring) throws Exception;
    }

    final int size;
    final List<RingEndpoint> planes = new ArrayList<>();
    final List<PeerAddress> peers = new ArrayList<>();
    final List<Ring> rings = new ArrayList<>();
    private final ExecutorService pool;
    private final AtomicLong seq = new AtomicLong();

    private TestRings(int size) {
        this.size = size;
        this.pool = Executors.newFixedThreadPool(size, r -> {
            Thread t = new Thread(r, "test-rank");
            t.setDaemon(true);
            return t;
        });
    }

    /** Starts the planes only. */
    static TestRings planes(int size, String job, DataPlaneOptions options) throws IOException {
        return planes(size, job, r -> options);
    }

    /** Starts the planes only, each rank with its own options (e.g. its own TLS certificate). */
    static TestRings planes(int size, String job, java.util.function.IntFunction<DataPlaneOptions> options)
            throws IOException {
        TestRings t = new TestRings(size);
        for (int r = 0; r < size; r++) {
            ServerSocketChannel listener = RingEndpoint.bindEphemeral("127.0.0.1");
            RingEndpoint p = RingEndpoint.start(listener, job, options.apply(r));
            t.planes.add(p);
            t.peers.add(new PeerAddress("127.0.0.1", p.port()));
        }
        return t;
    }

    /** Starts the planes and forms the ring of generation 1. */
    static TestRings formed(int size, DataPlaneOptions options) throws Exception {
        TestRings t = planes(size, "test-job", options);
        t.rings.addAll(t.onAll((rank, ring) -> t.planes.get(rank).openRing(1, rank, t.peers), 30));
        return t;
    }

    long nextSeq() {
        return seq.incrementAndGet();
    }

    /** Reserves {@code k} sequence numbers; returns the first. */
    long reserve(int k) {
        return seq.getAndAdd(k) + 1;
    }

    /** Runs the task on every rank concurrently; results by rank. Rethrows the first failure. */
    <T> List<T> onAll(RankTask<T> task, int timeoutSeconds) throws Exception {
        List<Future<T>> fs = submitAll(task);
        List<T> out = new ArrayList<>();
        for (Future<T> f : fs) {
            try {
                out.add(f.get(timeoutSeconds, TimeUnit.SECONDS));
            } catch (ExecutionException e) {
                if (e.getCause() instanceof Exception x) {
                    throw x;
                }
                throw e;
            } catch (TimeoutException e) {
                throw new AssertionError("a rank did not finish within " + timeoutSeconds + " s", e);
            }
        }
        return out;
    }

    <T> List<Future<T>> submitAll(RankTask<T> task) {
        List<Future<T>> fs = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            int rank = r;
            fs.add(pool.submit(() -> task.run(rank, rings.isEmpty() ? null : rings.get(rank))));
        }
        return fs;
    }

    @Override
    public void close() {
        rings.forEach(Ring::close);
        planes.forEach(RingEndpoint::close);
        pool.shutdownNow();
    }
}
