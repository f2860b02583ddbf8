package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.internal.cluster.ClusterNode;
import dev.kolo.runtime.internal.collectives.DataPlane;
import dev.kolo.runtime.internal.collectives.KernelReducer;
import dev.kolo.runtime.internal.control.ControlMessage.Assignment;
import dev.kolo.runtime.internal.control.ControlMessage.ErrorKind;
import dev.kolo.runtime.internal.control.ControlMessage.OpResponse;
import dev.kolo.runtime.internal.control.ControlMessage.ResponseEntry;
import dev.kolo.runtime.internal.control.OpSpec;
import dev.kolo.runtime.internal.control.OpType;
import dev.kolo.runtime.internal.control.WorkerInfo;
import dev.kolo.runtime.internal.engine.CollectiveClient;
import dev.kolo.runtime.internal.observability.KoloMetrics;
import dev.kolo.runtime.internal.observability.Observability;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A rank's op of generation 1 is still running on the collective thread when generation 2 is assigned (its
 * peer was lost, the rank regrouped at once); the op then fails late, e.g. because the peer closed the
 * connection on its own abort. That failure must end generation 1 only: found by {@code bench chaos
 * partition-3-2}, where it aborted generation 2 on one rank, which then regrouped alone while the others
 * waited for it in generation 2.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class StaleGenerationFailureTest {
    @Test
    void aLateFailureOfTheOldGenerationLeavesTheNewOneRunning() throws Exception {
        String job = LocalJob.uniqueName("stale");
        ClusterNode node = ClusterNode.start(LocalJob.config(job, 2).build(), new SimpleMeterRegistry(), null);
        MirrorPlane first = new MirrorPlane(true);
        MirrorPlane second = new MirrorPlane(false);
        List<DataPlane> planes = List.of(first, second);
        AtomicInteger opened = new AtomicInteger();
        CollectiveClient client = new CollectiveClient(node, (a, self, channel) -> planes.get(opened.getAndIncrement()),
                new KernelReducer(dev.kolo.kernels.Kernels.java()), "stale-test-collectives",
                new Observability(new KoloMetrics(job, false)));
        try {
            WorkerInfo me = new WorkerInfo(node.nodeId(), "127.0.0.1", 1, 0, 1, -1, 0, 0, 1);
            WorkerInfo peer = new WorkerInfo("peer-node", "127.0.0.1", 2, 0, 2, -1, 1, 0, 1);
            client.onAssignment(new Assignment(1, node.nodeId(), List.of(me, peer)), me);
            OpSpec a = allreduce("a");
            CompletableFuture<Tensor> inFirst = client.submit(a, Tensor.of(new float[] {1f, 2f}, 2), null, false);
            client.onResponse(new OpResponse(1, 0, 0, OpType.ALLREDUCE, List.of(new ResponseEntry("a", true, a,
                    new long[0])), ErrorKind.NONE, ""));
            assertTrue(first.entered.await(20, TimeUnit.SECONDS), "generation 1's allreduce started");

            // The peer leaves: the worker aborts generation 1 (its op fails at once) and is assigned generation 2.
            WorkerLostException lost = new WorkerLostException("worker rank 1 left the cluster", 1, "127.0.0.1");
            client.abort(lost);
            ExecutionException failed = assertThrows(ExecutionException.class, () -> inFirst.get(10, TimeUnit.SECONDS));
            assertSame(lost, failed.getCause());
            client.onAssignment(new Assignment(2, node.nodeId(), List.of(me, peer)), me);
            OpSpec b = allreduce("b");
            CompletableFuture<Tensor> inSecond = client.submit(b, Tensor.of(new float[] {3f, 4f}, 2), null, false);

            // Now generation 1's op fails late on the collective thread, which then opens generation 2's data plane.
            first.failWith(new WorkerLostException("data connection to rank 1 closed the connection during op 0 of "
                    + "generation 1", 1, "127.0.0.1"));
            assertTrue(first.failed.await(10, TimeUnit.SECONDS));
            // Generation 2 runs its op to the end: the late failure did not abort it.
            client.onResponse(new OpResponse(2, 0, 0, OpType.ALLREDUCE, List.of(new ResponseEntry("b", true, b,
                    new long[0])), ErrorKind.NONE, ""));
            Tensor result = inSecond.handle((r, e) -> {
                if (e != null) {
                    throw new AssertionError("generation 2's op was failed by generation 1's late failure", e);
                }
                return r;
            }).get(20, TimeUnit.SECONDS);
            org.junit.jupiter.api.Assertions.assertArrayEquals(new float[] {3f, 4f}, result.toFloatArray());
            assertFalse(client.submit(allreduce("c"), Tensor.of(new float[] {5f, 6f}, 2), null, false).isDone(),
                    "generation 2 still accepts ops");
        } finally {
            client.close();
            node.close();
        }
    }

    private static OpSpec allreduce(String name) {
        return new OpSpec(name, OpType.ALLREDUCE, DType.FLOAT32, new long[] {2}, ReduceOp.SUM, 1.0, 1.0, 0, null);
    }

}
