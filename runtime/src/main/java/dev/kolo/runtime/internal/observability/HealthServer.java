package dev.kolo.runtime.internal.observability;

import dev.kolo.runtime.KoloException;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The worker's HTTP endpoint on {@code KOLO_METRICS_PORT}: {@code /metrics} in Prometheus text format,
 * {@code /health/live} (answered by the event loop itself, so it reflects only that the process and its
 * event loop respond, never collective progress) and {@code /health/ready} (200 while in a ring of the
 * current generation, 503 with the reason otherwise), and whatever else the worker routes there (the status page).
 */
public final class HealthServer implements AutoCloseable {
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(HealthServer.class);
    static final String METRICS = "/metrics";
    static final String LIVE = "/health/live";
    static final String READY = "/health/ready";

    private final HttpServer server;

    private HealthServer(HttpServer server) {
        this.server = server;
    }

    public static HealthServer start(Vertx vertx, String host, int port, KoloMetrics metrics, Supplier<Readiness> readiness) {
        return start(vertx, host, port, 1, metrics, readiness, router -> { });
    }

    /**
     * Serves on the first free port of {@code port .. port + tries - 1}: a port left at its default moves up, as
     * the cluster port does under local discovery, so that several workers fit on one machine (or in one JVM).
     */
    public static HealthServer start(Vertx vertx, String host, int port, int tries, KoloMetrics metrics,
                                     Supplier<Readiness> readiness, Consumer<Router> moreRoutes) {
        Router router = Router.router(vertx);
        router.get(METRICS).handler(ctx -> metrics(ctx, metrics));
        router.get(LIVE).handler(ctx -> ctx.response().end("live\n"));
        router.get(READY).handler(ctx -> ready(ctx, readiness));
        moreRoutes.accept(router);
        router.route().last().handler(ctx -> ctx.response().setStatusCode(404)
                .end("not found; try /, " + METRICS + ", " + LIVE + " or " + READY + "\n"));
        Throwable last = null;
        for (int p = port; p < port + tries && p <= 65535; p++) {
            HttpServer server = vertx.createHttpServer().requestHandler(router);
            try {
                server.listen(p, host).toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
                if (p != port) {
                    LOG.info("metrics port {} is taken: serving metrics and health on {}", port, p);
                }
                return new HealthServer(server);
            } catch (Exception e) {
                last = e.getCause() != null ? e.getCause() : e;
                server.close();
            }
        }
        throw new KoloException("metrics port " + port + (tries > 1 ? " (and the next " + (tries - 1) + ")" : "")
                + " on " + host + " is not available (" + last.getMessage() + "); set KOLO_METRICS_PORT "
                + "(--metrics-port) to a free port, or 0 to disable the endpoint, or KOLO_METRICS_HOST "
                + "(--metrics-host) to an address of this machine");
    }

    private static void metrics(RoutingContext ctx, KoloMetrics metrics) {
        // Rendering walks every meter: keep it off the event loop.
        ctx.response().putHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
        ctx.vertx().executeBlocking(() -> metrics.registry().scrape())
                .onSuccess(text -> ctx.response().end(text))
                .onFailure(e -> ctx.response().setStatusCode(500).end(String.valueOf(e)));
    }

    private static void ready(RoutingContext ctx, Supplier<Readiness> readiness) {
        Readiness r = readiness.get();
        if (r.ready()) {
            ctx.response().end("ready: " + r.detail() + "\n");
        } else {
            ctx.response().setStatusCode(503).end("not ready: " + r.detail() + "\n");
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
