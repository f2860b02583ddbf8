package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;

import io.vertx.core.eventbus.Message;
import java.lang.reflect.Proxy;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/** A message the codec refuses (the clustered bus decodes on first read) is dropped, not thrown at the handler. */
class ControlInboxTest {

    @SuppressWarnings("unchecked")
    private static Message<ControlMessage> message(java.util.function.Supplier<ControlMessage> body) {
        return (Message<ControlMessage>) Proxy.newProxyInstance(Message.class.getClassLoader(),
                new Class<?>[] {Message.class}, (proxy, method, args) -> switch (method.getName()) {
                    case "body" -> body.get();
                    case "address" -> "kolo.job.worker.node-1";
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    @Test
    void malformedBodiesAreDroppedAndGoodOnesPassThrough() {
        var log = LoggerFactory.getLogger(ControlInboxTest.class);
        assertNull(ControlInbox.body(message(() -> {
            throw new IllegalArgumentException("control field rank = 70000 is outside 0..65534");
        }), log, "worker test"));
        ControlMessage ok = new ControlMessage.MembershipPending(3);
        assertSame(ok, ControlInbox.body(message(() -> ok), log, "worker test"));
    }
}
