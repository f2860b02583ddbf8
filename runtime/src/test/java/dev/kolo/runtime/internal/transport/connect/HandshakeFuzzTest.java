package dev.kolo.runtime.internal.transport.connect;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.kolo.testing.FuzzLimits;
import java.nio.ByteBuffer;

/**
 * Fuzz target of the data-plane handshake: the same bytes are read as a hello the way {@link Acceptor} reads
 * one (fixed part, early magic check, text length, text, decode) and as an ack the way {@link Greeter} does.
 * Only {@link IllegalArgumentException} may reject; a decoded hello encodes back to the same hello.
 */
class HandshakeFuzzTest {

    @FuzzTest
    void decode(byte[] input) throws Exception {
        FuzzLimits.run(input, (1 << 16) + 16L * input.length, () -> {
            hello(input);
            ack(input);
        });
    }

    private static void hello(byte[] input) {
        ByteBuffer in = ByteBuffer.wrap(input);
        if (input.length < Handshake.HELLO_FIXED_BYTES) {
            return; // the acceptor waits for more, until the hello deadline
        }
        ByteBuffer fixed = ByteBuffer.allocate(Handshake.HELLO_FIXED_BYTES);
        fixed.put(in.slice(0, Handshake.HELLO_FIXED_BYTES)).flip();
        in.position(Handshake.HELLO_FIXED_BYTES);
        Handshake.Hello h;
        try {
            int len = Handshake.helloTextLength(fixed);
            if (in.remaining() < len) {
                return;
            }
            ByteBuffer text = ByteBuffer.allocate(len);
            text.put(in.slice(in.position(), len)).flip();
            h = Handshake.decodeHello(fixed, text);
        } catch (IllegalArgumentException rejected) {
            return;
        }
        ByteBuffer again = Handshake.encodeHello(h);
        ByteBuffer fixed2 = again.slice(0, Handshake.HELLO_FIXED_BYTES);
        ByteBuffer text2 = ByteBuffer.allocate(Handshake.helloTextLength(fixed2));
        text2.put(again.slice(Handshake.HELLO_FIXED_BYTES, text2.capacity())).flip();
        assertEquals(h, Handshake.decodeHello(fixed2, text2));
    }

    private static void ack(byte[] input) {
        if (input.length < Handshake.ACK_FIXED_BYTES) {
            return;
        }
        ByteBuffer fixed = ByteBuffer.wrap(input, 0, Handshake.ACK_FIXED_BYTES).slice();
        try {
            int len = Handshake.ackTextLength(fixed);
            if (input.length - Handshake.ACK_FIXED_BYTES < len) {
                return;
            }
            ByteBuffer text = ByteBuffer.allocate(len);
            text.put(input, Handshake.ACK_FIXED_BYTES, len).flip();
            Handshake.decodeAck(fixed, text);
        } catch (IllegalArgumentException rejected) {
            // the greeter turns it into a failed ring formation naming the peer
        }
    }
}
