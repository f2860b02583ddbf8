package dev.kolo.runtime.internal.observability;

import dev.kolo.runtime.KoloException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The worker's HTTP endpoint on {@code KOLO_METRICS_PORT}: {@code /metrics} in Prometheus text format,
 * {@code /health/live} (answered by the event loop itself, so it reflects only that the process and its
 * event loop respond, never collective progress) and {@code /health/ready} (200 while in a ring of the
 * current generation, 503 with the reason otherwise).
 */
public final class HealthServer implements AutoCloseable {
    static final String METRICS = "/metrics";
    static final String LIVE = "/health/live";
    static final String READY = "/health/ready";

    private final HttpServer server;

    private HealthServer(HttpServer server) {
        this.server = server;
    }

    public static HealthServer start(Vertx vertx, String host, int port, KoloMetrics metrics, Supplier<Readiness> readiness) {
        HttpServer server = vertx.createHttpServer().requestHandler(req -> handle(req, metrics, readiness));
        try {
            server.listen(port, host).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new KoloException("metrics port " + port + " on " + host + " is not available (" + cause.getMessage()
                    + "); set KOLO_METRICS_PORT (--metrics-port) to a free port, or 0 to disable the endpoint");
        }
        return new HealthServer(server);
    }

    private static void handle(HttpServerRequest req, KoloMetrics metrics, Supplier<Readiness> readiness) {
        switch (req.path()) {
            case METRICS:
                // Rendering walks every meter: keep it off the event loop.
                req.response().putHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
                Vertx.currentContext().owner().executeBlocking(() -> metrics.registry().scrape())
                        .onSuccess(text -> req.response().end(text))
                        .onFailure(e -> req.response().setStatusCode(500).end(String.valueOf(e)));
                break;
            case LIVE:
                req.response().end("live\n");
                break;
            case READY: {
                Readiness r = readiness.get();
                if (r.ready()) {
                    req.response().end("ready: " + r.detail() + "\n");
                } else {
                    req.response().setStatusCode(503).end("not ready: " + r.detail() + "\n");
                }
                break;
            }
            default:
                req.response().setStatusCode(404).end("not found; try " + METRICS + ", " + LIVE + " or " + READY + "\n");
        }
    }

    public int port() {
        return server.actualPort();
    }

    @Override
    public void close() {
        Future<Void> f = server.close();
        try {
            f.toCompletionStage().toCompletableFuture().get(5, TimeUnit.SECONDS);
        } catch (Exception ignored) {
            // closing anyway
        }
    }
}
