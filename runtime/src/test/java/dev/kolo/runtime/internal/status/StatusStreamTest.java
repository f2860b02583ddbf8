package dev.kolo.runtime.internal.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The status stream on a real HTTP server (Vert.x, as the metrics port serves it) read over real sockets: it
 * takes {@link StatusPage#MAX_STREAMS} readers and answers one more with 503 naming the limit; a reader that
 * stops reading is disconnected once it falls behind, while the readers that keep up get every event.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class StatusStreamTest {
    private static final long GUARD_NANOS = TimeUnit.SECONDS.toNanos(60);
    private Vertx vertx;
    private HttpServer server;
    private StatusPage page;
    private final List<Socket> sockets = new ArrayList<>();

    @BeforeEach
    void serve() throws Exception {
        vertx = Vertx.vertx();
        page = new StatusPage("status-stream-test");
        Router router = Router.router(vertx);
        page.route(vertx, router);
        server = vertx.createHttpServer().requestHandler(router).listen(0, "127.0.0.1").toCompletionStage()
                .toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @AfterEach
    void stop() throws Exception {
        for (Socket s : sockets) {
            s.close();
        }
        vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
    }

    @Test
    void takesAtMostItsReadersAndSaysWhyToOneMore() throws Exception {
        List<Socket> readers = new ArrayList<>();
        for (int i = 0; i < StatusPage.MAX_STREAMS; i++) {
            Socket s = open(0);
            assertTrue(head(s).startsWith("HTTP/1.1 200"), "reader " + i + " is admitted");
            readers.add(s);
        }
        Socket refused = open(0);
        String status = head(refused);
        assertTrue(status.startsWith("HTTP/1.1 503"), "one more reader: " + status);
        // The refusal closes the connection: the refused reader holds nothing on the worker.
        String answer = new String(refused.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(answer.contains("already has " + StatusPage.MAX_STREAMS + " readers") && answer.contains("/status"),
                answer);

        // One reader leaves: its place is free again.
        readers.get(0).close();
        awaitCondition(() -> page.streams() < StatusPage.MAX_STREAMS, "the server never noticed a reader left");
        assertTrue(head(open(0)).startsWith("HTTP/1.1 200"), "a reader is admitted in the free place");
    }

    @Test
    void aReaderThatStopsReadingIsDisconnectedAndTheOthersGetEveryEvent() throws Exception {
        Socket slow = open(1024); // a small receive window, and it never reads past the headers
        assertTrue(head(slow).startsWith("HTTP/1.1 200"));
        List<Socket> fast = List.of(open(0), open(0));
        List<AtomicInteger> seen = new ArrayList<>();
        for (Socket s : fast) {
            assertTrue(head(s).startsWith("HTTP/1.1 200"));
            AtomicInteger events = new AtomicInteger();
            seen.add(events);
            Thread reader = new Thread(() -> countEvents(s, events), "fast-reader");
            reader.setDaemon(true);
            reader.start();
        }
        awaitCondition(() -> page.streams() == 3, "three readers");

        String json = "{\"pad\":\"" + "x".repeat(32 * 1024) + "\"}"; // an event of a large job
        int published = 0;
        long deadline = System.nanoTime() + GUARD_NANOS;
        while (page.streams() > 2) {
            if (System.nanoTime() - deadline > 0) {
                fail("the reader that does not read was never disconnected; " + published + " events published");
            }
            page.publish(json);
            published++;
            int expected = published;
            // The readers that read keep up: the next event goes out once they have this one.
            awaitCondition(() -> seen.stream().allMatch(n -> n.get() >= expected), "the fast readers fell behind");
        }
        assertEquals(2, page.streams(), "the readers that read are still there");
        for (AtomicInteger n : seen) {
            assertEquals(published, n.get(), "a fast reader got every event");
        }
        // The slow reader's connection is closed: after what was sent before, its stream ends.
        slow.setSoTimeout((int) TimeUnit.SECONDS.toMillis(60));
        InputStream in = slow.getInputStream();
        byte[] buf = new byte[64 * 1024];
        try {
            while (in.read(buf) >= 0) {
                // drains what reached it before the close
            }
        } catch (java.net.SocketTimeoutException e) {
            fail("the disconnected reader's stream never ended");
        } catch (IOException reset) {
            // a reset is a close too
        }
    }

    private Socket open(int receiveBuffer) throws IOException {
        Socket s = new Socket();
        sockets.add(s);
        if (receiveBuffer > 0) {
            s.setReceiveBufferSize(receiveBuffer);
        }
        s.connect(new InetSocketAddress("127.0.0.1", server.actualPort()), 10_000);
        s.setSoTimeout((int) TimeUnit.SECONDS.toMillis(30));
        OutputStream out = s.getOutputStream();
        out.write(("GET /status/stream HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")
                .getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return s;
    }

    /** Reads the response's status line and headers. */
    private static String head(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n")) {
            int c = in.read();
            if (c < 0) {
                break;
            }
            head.append((char) c);
        }
        return head.toString();
    }

    /** Counts the {@code event: status} lines that arrive, until the stream ends. */
    private static void countEvents(Socket s, AtomicInteger events) {
        String marker = "event: status";
        try {
            InputStream in = s.getInputStream();
            int matched = 0;
            for (int c; (c = in.read()) >= 0; ) {
                matched = c == marker.charAt(matched) ? matched + 1 : (c == marker.charAt(0) ? 1 : 0);
                if (matched == marker.length()) {
                    events.incrementAndGet();
                    matched = 0;
                }
            }
        } catch (IOException e) {
            // the test closes it
        }
    }

    private static void awaitCondition(BooleanSupplier condition, String failure) throws InterruptedException {
        long deadline = System.nanoTime() + GUARD_NANOS;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail(failure);
            }
            Thread.sleep(2); // polling a condition, bounded by the deadline
        }
    }
}
