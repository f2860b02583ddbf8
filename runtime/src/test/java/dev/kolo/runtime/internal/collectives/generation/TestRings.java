package dev.kolo.runtime.internal.collectives.generation;

import dev.kolo.runtime.internal.collectives.AllreduceAlgorithms;
import dev.kolo.runtime.internal.collectives.Hierarchy;
import dev.kolo.runtime.internal.collectives.KernelReducer;
import dev.kolo.runtime.internal.collectives.Reducer;

import dev.kolo.runtime.internal.transport.connect.Endpoint;
import dev.kolo.runtime.internal.transport.connect.PeerAddress;
import dev.kolo.runtime.internal.transport.connect.TransportOptions;
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
public final class TestRings implements AutoCloseable {
    public interface RankTask<T> {
        T run(int rank, GenerationDataPlane ring) throws Exception;
    }

    public final int size;
    public final List<Endpoint> planes = new ArrayList<>();
    public final List<PeerAddress> peers = new ArrayList<>();
    public final List<GenerationDataPlane> rings = new ArrayList<>();
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
    public static TestRings planes(int size, String job, TransportOptions options) throws IOException {
        return planes(size, job, r -> options);
    }

    /** Starts the planes only, each rank with its own options (e.g. its own TLS certificate). */
    public static TestRings planes(int size, String job, java.util.function.IntFunction<TransportOptions> options)
            throws IOException {
        TestRings t = new TestRings(size);
        for (int r = 0; r < size; r++) {
            ServerSocketChannel listener = Endpoint.bindEphemeral("127.0.0.1");
            Endpoint p = Endpoint.start(listener, job, options.apply(r));
            t.planes.add(p);
            t.peers.add(new PeerAddress("127.0.0.1", p.port()));
        }
        return t;
    }

    /**
     * Starts one plane per entry of {@code hosts}, bound to that loopback address (127.0.0.1, 127.0.0.2, ...: distinct
     * addresses are distinct hosts to the data plane, so ranks of one address share memory and the others talk TCP).
     */
    public static TestRings onHosts(List<String> hosts, String job, TransportOptions options) throws IOException {
        TestRings t = new TestRings(hosts.size());
        for (String host : hosts) {
            Endpoint p = Endpoint.start(Endpoint.bindEphemeral(host), job, options);
            t.planes.add(p);
            t.peers.add(new PeerAddress(host, p.port()));
        }
        return t;
    }

    /** Starts the planes and forms the ring of generation 1. */
    public static TestRings formed(int size, TransportOptions options) throws Exception {
        TestRings t = planes(size, "test-job", options);
        t.rings.addAll(t.onAll((rank, ring) -> open(t.planes.get(rank), 1, rank, t.peers), 30));
        return t;
    }

    /** Forms generation {@code generation} on every rank with the given hierarchy. */
    public void form(long generation, Hierarchy hierarchy) throws Exception {
        rings.addAll(onAll((rank, ring) -> new GenerationDataPlane(planes.get(rank).connect(generation, rank, peers), REDUCER,
                planes.get(rank).options().chunkBytes(), AllreduceAlgorithms.defaults(), hierarchy), 30));
    }

    /** The generation's ring over a plane's links, with the kernels' Java loops as its arithmetic. */
    public static GenerationDataPlane open(Endpoint plane, long generation, int rank, List<PeerAddress> peers) {
        return new GenerationDataPlane(plane.connect(generation, rank, peers), REDUCER, plane.options().chunkBytes());
    }

    private static final Reducer REDUCER = new KernelReducer(dev.kolo.kernels.Kernels.java());

    public long nextSeq() {
        return seq.incrementAndGet();
    }

    /** Reserves {@code k} sequence numbers; returns the first. */
    public long reserve(int k) {
        return seq.getAndAdd(k) + 1;
    }

    /** Runs the task on every rank concurrently; results by rank. Rethrows the first failure. */
    public <T> List<T> onAll(RankTask<T> task, int timeoutSeconds) throws Exception {
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

    public <T> List<Future<T>> submitAll(RankTask<T> task) {
        List<Future<T>> fs = new ArrayList<>();
        for (int r = 0; r < size; r++) {
            int rank = r;
            fs.add(pool.submit(() -> task.run(rank, rings.isEmpty() ? null : rings.get(rank))));
        }
        return fs;
    }

    @Override
    public void close() {
        rings.forEach(GenerationDataPlane::close);
        planes.forEach(Endpoint::close);
        pool.shutdownNow();
    }
}
