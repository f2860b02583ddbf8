package dev.kolo.runtime.internal.bootstrap;

import dev.kolo.runtime.internal.cluster.WorkerVerticle;
import dev.kolo.runtime.internal.control.ControlMessage.HelloReply;
import java.util.concurrent.TimeUnit;

/** The coordinator's last answer to a worker's hello, which the waits of a worker report while they wait. */
final class HelloReplies {
    private HelloReplies() {
    }

    /** @return the coordinator's last answer to this worker's hello, or null when there is none to report */
    static HelloReply last(WorkerVerticle verticle) {
        try {
            return verticle.lastHelloReply().toCompletionStage().toCompletableFuture().get(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            return null; // the worker's context is busy or closing: report without the coordinator's view
        }
    }
}
