package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.internal.cluster.ClusterNode;
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
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A coordinator response that reaches this rank but never its peer (the control plane lost it) must not leave
 * both waiting for ever: every rank runs a response only once every rank holds it, so the rank that holds it
 * ends the generation after the data plane's progress deadline, naming the rank that lacks it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LostResponseTest {
    @Test
    void aResponseThatNeverReachesAPeerEndsTheGenerationWithinTheDeadline() throws Exception {
        String job = LocalJob.uniqueName("lost");
        KoloConfig config = LocalJob.config(job, 2).set(Settings.HEARTBEAT_TIMEOUT, Duration.ofSeconds(1)).build();
        ClusterNode node = ClusterNode.start(config, new SimpleMeterRegistry(), null);
        MirrorPlane plane = new MirrorPlane(false);
        plane.peerLacksResponses = true;
        CollectiveClient client = new CollectiveClient(node, (a, self, channel) -> plane,
                new KernelReducer(dev.kolo.kernels.Kernels.java()), "lost-test-collectives",
                new Observability(new KoloMetrics(job, false)));
        try {
            WorkerInfo me = new WorkerInfo(node.nodeId(), "127.0.0.1", 1, 0, 1, -1, 0, 0, 1);
            WorkerInfo peer = new WorkerInfo("peer-node", "127.0.0.1", 2, 0, 2, -1, 1, 0, 1);
            client.onAssignment(new Assignment(1, node.nodeId(), List.of(me, peer)), me);
            OpSpec a = new OpSpec("a", OpType.ALLREDUCE, DType.FLOAT32, new long[] {2}, ReduceOp.SUM, 1, 1, 0, null);
            CompletableFuture<Tensor> op = client.submit(a, Tensor.of(new float[] {1f, 2f}, 2), null, false);
            long start = System.nanoTime();
            client.onResponse(new OpResponse(1, 0, 0, OpType.ALLREDUCE, List.of(new ResponseEntry("a", true, a,
                    new long[0])), ErrorKind.NONE, ""));
            ExecutionException e = assertThrows(ExecutionException.class, () -> op.get(30, TimeUnit.SECONDS));
            double seconds = (System.nanoTime() - start) / 1e9;
            String message = e.getCause().getMessage();
            assertTrue(message.contains("coordinator response 0 of generation 1 reached this rank")
                    && message.contains("but not ranks [1]"), message);
            // A generation failure, as a lost peer is: what an elastic job regroups after.
            assertInstanceOf(WorkerLostException.class, e.getCause());
            // The deadline is the data plane's progress deadline: 2 x heartbeat timeout, at least 10 s.
            assertTrue(seconds >= 9.5 && seconds < 25, "failed after " + seconds + " s");
        } finally {
            client.close();
            node.close();
        }
    }
}
