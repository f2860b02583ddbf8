package dev.kolo.runtime.internal.security;

import dev.kolo.runtime.internal.control.Addressed;
import dev.kolo.runtime.internal.control.ControlCodec;
import dev.kolo.runtime.internal.control.ControlMessage;
import dev.kolo.runtime.internal.control.ControlRejections;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.eventbus.MessageCodec;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The codec registered as {@link ControlCodec#NAME} on a node's event bus. Without a job secret it is
 * {@link ControlCodec} itself on the wire; with one every message that leaves the node is sealed by the
 * {@link ControlAuthenticator} and every message that arrives must open, else it reaches its consumer as
 * an {@link ControlAuthenticator.Rejected} (already counted and logged here) that consumers ignore. Messages
 * between verticles of the same node never touch the wire and need no tag.
 */
public final class AuthenticatingCodec implements MessageCodec<Object, Object> {
    private static final Logger LOG = LoggerFactory.getLogger(AuthenticatingCodec.class);

    private final ControlCodec codec = new ControlCodec();
    private final ControlAuthenticator auth;
    private final ControlRejections rejections;

    /** @param auth the node's authenticator, or null when the job has no secret */
    public AuthenticatingCodec(ControlAuthenticator auth, ControlRejections rejections) {
        this.auth = auth;
        this.rejections = rejections;
    }

    @Override
    public void encodeToWire(Buffer out, Object body) {
        ControlMessage m = body instanceof Addressed a ? a.message() : (ControlMessage) body;
        if (auth == null) {
            codec.encodeToWire(out, m);
            return;
        }
        String to = body instanceof Addressed a ? a.toNode() : null;
        if (to == null) {
            // A bug: every remote send goes through ClusterNode.seal. Sealed for no one, so every receiver drops it.
            LOG.error("control message {} sent to another node without a destination; it will be dropped",
                    m.getClass().getSimpleName());
            to = "";
        }
        auth.seal(out, to, m, codec);
    }

    @Override
    public Object decodeFromWire(int pos, Buffer in) {
        boolean sealed = ControlAuthenticator.isSealed(pos, in);
        Object m;
        if (auth == null) {
            m = sealed ? new ControlAuthenticator.Rejected("unexpected-tag", "an authenticated control message, but "
                    + "this worker has no KOLO_JOB_SECRET: set the same KOLO_JOB_SECRET on every worker")
                    : decodePlain(pos, in);
        } else {
            m = sealed ? auth.open(pos, in, codec) : new ControlAuthenticator.Rejected("no-tag", "a control message "
                    + "without an authentication tag: its sender has no KOLO_JOB_SECRET (a stranger on the network, "
                    + "or a worker started without the job's secret)");
        }
        if (m instanceof ControlAuthenticator.Rejected r) {
            rejections.reject(r.reason(), r.detail());
        }
        return m;
    }

    private Object decodePlain(int pos, Buffer in) {
        try {
            return codec.decodeFromWire(pos, in);
        } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
            return new ControlAuthenticator.Rejected("malformed", "a malformed control message: " + e.getMessage());
        }
    }

    @Override
    public Object transform(Object body) {
        return body instanceof Addressed a ? a.message() : body; // records are immutable: local delivery shares them
    }

    @Override
    public String name() {
        return ControlCodec.NAME;
    }

    @Override
    public byte systemCodecID() {
        return -1;
    }
}
