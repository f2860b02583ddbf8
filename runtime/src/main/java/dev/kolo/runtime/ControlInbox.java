package dev.kolo.runtime;

import io.vertx.core.eventbus.Message;
import org.slf4j.Logger;

/**
 * Opens received control messages. The clustered event bus decodes a body only when it is first read, so
 * a malformed message (rejected by {@link ControlCodec} with the field it got wrong) surfaces here: it is
 * dropped with a warning instead of failing the handler.
 */
final class ControlInbox {
    private ControlInbox() {
    }

    /** @return the decoded message, or null if it was malformed (and has been logged) */
    static ControlMessage body(Message<ControlMessage> message, Logger log, String receiver) {
        try {
            return message.body();
        } catch (IllegalArgumentException e) {
            log.warn("control plane: {} dropped a malformed message sent to {}: {}", receiver, message.address(),
                    e.getMessage());
            return null;
        }
    }
}
