package dev.kolo.runtime.internal.status;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.StaticHandler;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The status page's HTTP side on the metrics port: the page at {@code /}, its assets (the page's script and
 * styles, uPlot from its WebJar, all inside the jar), the board as JSON at {@code /status}, and at
 * {@code /status/stream} a server-sent event {@code status} each status interval. Read-only.
 *
 * <p>The stream holds a connection and a write queue per reader, so it takes at most {@link #MAX_STREAMS}
 * readers (one more is answered 503 with the reason), and a reader that falls {@link #MAX_QUEUED_BYTES} behind
 * is disconnected rather than buffered for (a browser's page reconnects by itself, two seconds later).
 */
public final class StatusPage {
    /** The page's own files on the class path. */
    static final String PAGE_ASSETS = "dev/kolo/runtime/status";
    /** uPlot's files in its WebJar; the version is the one the build depends on ({@code uplot.version}). */
    static final String UPLOT_ASSETS = "META-INF/resources/webjars/uplot/1.6.30/dist";
    /** Streams open at once at most: a few pages of a few people, not anyone in any number. */
    static final int MAX_STREAMS = 8;
    /**
     * Bytes of events a reader may fall behind by (a few events of a large job): one further behind does not
     * read, and is disconnected.
     */
    static final int MAX_QUEUED_BYTES = 256 * 1024;

    private final String boardAddress;
    private final Set<HttpServerResponse> listeners = ConcurrentHashMap.newKeySet();

    /** @param boardAddress the {@link StatusVerticle}'s address */
    public StatusPage(String boardAddress) {
        this.boardAddress = boardAddress;
    }

    /** Adds the page's routes to the metrics port's router. */
    public void route(Vertx vertx, Router router) {
        router.get("/").handler(ctx -> ctx.reroute("/assets/index.html"));
        router.get("/status").handler(ctx -> board(vertx, ctx));
        router.get("/status/stream").handler(this::stream);
        router.get("/assets/uplot/*").handler(StaticHandler.create(UPLOT_ASSETS).setCachingEnabled(true));
        router.get("/assets/*").handler(StaticHandler.create(PAGE_ASSETS).setCachingEnabled(false));
    }

    private void board(Vertx vertx, RoutingContext ctx) {
        vertx.eventBus().<String>request(StatusVerticle.queryAddress(boardAddress), "",
                        new io.vertx.core.eventbus.DeliveryOptions().setLocalOnly(true))
                .onSuccess(reply -> ctx.response().putHeader("Content-Type", "application/json")
                        .putHeader("Cache-Control", "no-store").end(reply.body()))
                .onFailure(e -> ctx.response().setStatusCode(503).end("status not available: " + e.getMessage()));
    }

    private void stream(RoutingContext ctx) {
        HttpServerResponse response = ctx.response();
        if (!admit(response)) {
            response.setStatusCode(503).putHeader("Content-Type", "text/plain; charset=utf-8")
                    .putHeader("Retry-After", "10").putHeader("Cache-Control", "no-store")
                    .putHeader("Connection", "close")
                    .end("this worker's status stream already has " + MAX_STREAMS + " readers, the most it takes: "
                            + "close another page of it, or read /status (the same facts, once)\n")
                    .onComplete(v -> ctx.request().connection().close()); // the refused reader keeps nothing
            return;
        }
        response.setChunked(true).putHeader("Content-Type", "text/event-stream").putHeader("Cache-Control", "no-store");
        response.setWriteQueueMaxSize(MAX_QUEUED_BYTES);
        response.closeHandler(v -> listeners.remove(response));
        response.exceptionHandler(e -> listeners.remove(response));
        response.write("retry: 2000\n\n");
    }

    private synchronized boolean admit(HttpServerResponse response) {
        if (listeners.size() >= MAX_STREAMS) {
            return false;
        }
        listeners.add(response);
        return true;
    }

    boolean hasListeners() {
        return !listeners.isEmpty();
    }

    /** @return how many streams are open */
    int streams() {
        return listeners.size();
    }

    /** Sends one {@code status} event to every open page; a page that has stopped reading is disconnected. */
    void publish(String json) {
        String event = "event: status\ndata: " + json + "\n\n";
        for (HttpServerResponse r : listeners) {
            if (r.closed() || r.ended()) {
                listeners.remove(r);
            } else if (r.writeQueueFull()) {
                listeners.remove(r);
                r.reset(); // HTTP/1.1: closes the connection
            } else {
                r.write(event);
            }
        }
    }
}
