package dev.kolo.runtime.internal.cluster;

import io.vertx.core.Handler;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the control plane's Vert.x instance does with an exception no handler caught: logs it at ERROR, as
 * Vert.x would, except for one that Vert.x itself raises after a failed event-bus write.
 *
 * <p>When the connection to another member breaks under messages being written (that member is leaving: a
 * worker closes, or is lost), Vert.x 5.1 fails each send as it should, and then throws "Promise already
 * completed" from its own write callback, because the send's promise reports every failure as already
 * completed. The message's sender has been told by then, and its deadline covers the loss, so this second report
 * says nothing a user must read: it goes to DEBUG. It shows in a job whose workers close together, as the last
 * step of every job.
 */
final class UnhandledExceptions implements Handler<Throwable> {
    private static final Logger LOG = LoggerFactory.getLogger(UnhandledExceptions.class);

    @Override
    public void handle(Throwable t) {
        if (isFailedWriteReportedTwice(t)) {
            LOG.debug("an event-bus message could not be written (its receiver is leaving); its sender was told", t);
        } else {
            LOG.error("Unhandled exception", t);
        }
    }

    /**
     * @return whether {@code t} is Vert.x's second report of a failed socket write: "Promise already completed"
     *         thrown by {@code Promise.fail} where a promise takes a write's outcome, that write being an event-bus
     *         message (the clustered event bus's outbound connection) or a socket write (Vert.x's promise of a
     *         Netty write, failed when the channel closed under it), with no Kolo code on the stack (a promise
     *         Kolo completed twice is a bug of its own, and stays an ERROR)
     */
    static boolean isFailedWriteReportedTwice(Throwable t) {
        StackTraceElement[] stack = t.getStackTrace();
        if (!(t instanceof IllegalStateException) || !"Promise already completed".equals(t.getMessage())
                || stack.length < 2 || !isFrame(stack[0], "io.vertx.core.Promise", "fail")
                || !isFrame(stack[1], "io.vertx.core.Promise", "complete")) {
            return false;
        }
        boolean write = false;
        for (StackTraceElement e : stack) {
            String c = e.getClassName();
            if (c.startsWith("dev.kolo.")) {
                return false;
            }
            write |= c.equals("io.vertx.core.eventbus.impl.clustered.OutboundConnection")
                    || c.equals("io.vertx.core.net.impl.DelegatingChannelPromise");
        }
        return write;
    }

    private static boolean isFrame(StackTraceElement e, String className, String method) {
        return e.getClassName().equals(className) && e.getMethodName().equals(method);
    }
}
