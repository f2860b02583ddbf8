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
 */
public final class StatusPage {
    /** The page's own files on the class path. */
    static final String PAGE_ASSETS = "dev/kolo/runtime/status";
    /** uPlot's files in its WebJar; the version is the one the build depends on ({@code uplot.version}). */
    static final String UPLOT_ASSETS = "META-INF/resources/webjars/uplot/1.6.30/dist";
    /** Events a page may fall behind by before it misses some (a page that does not read is not waited for). */
    private static final int MAX_QUEUED_BYTES = 1 << 20;

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
        HttpServerResponse response = ctx.response().setChunked(true)
                .putHeader("Content-Type", "text/event-stream").putHeader("Cache-Control", "no-store");
        response.setWriteQueueMaxSize(MAX_QUEUED_BYTES);
        response.write("retry: 2000\n\n");
        listeners.add(response);
        response.closeHandler(v -> listeners.remove(response));
        response.exceptionHandler(e -> listeners.remove(response));
    }

    boolean hasListeners() {
        return !listeners.isEmpty();
    }

    /** Sends one {@code status} event to every open page. */
    void publish(String json) {
        String event = "event: status\ndata: " + json + "\n\n";
        for (HttpServerResponse r : listeners) {
            if (r.closed() || r.ended()) {
                listeners.remove(r);
            } else if (!r.writeQueueFull()) {
                r.write(event);
            }
        }
    }
}
