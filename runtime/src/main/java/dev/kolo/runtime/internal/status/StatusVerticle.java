package dev.kolo.runtime.internal.status;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Owns this worker's {@link StatusBoard}: takes the facts other parts send to its local address, samples the
 * series once a status interval and pushes the page's event to its open pages, and answers the page's requests
 * for the whole board. Messages are JSON objects with a {@code kind}:
 * <ul>
 * <li>{@code view}: this worker's generation ({@code job, generation, size, active, coordinator, selfRank,
 * coordinatorRank, coordinatorUrl, transport, kernels, workers: [{rank, host, pid, localRank, statusUrl}]});
 * <li>{@code event}: a generation event for the history ({@code time, generation, event, size, reason},
 * {@code lostRank} when a rank was lost);
 * <li>{@code report}: a rank's report ({@code rank, generation, report}: see {@link RankProgress#report()});
 * <li>{@code stalls}: the coordinator's waiting tensors ({@code stalls: [{tensor, missingRanks, seconds}]}).
 * </ul>
 */
public final class StatusVerticle extends VerticleBase {
    private static final Logger LOG = LoggerFactory.getLogger(StatusVerticle.class);
    /** How often ranks report, the series are sampled and open pages get an event. */
    public static final long INTERVAL_MILLIS = 1000;

    private final String address;
    private final StatusPage page;
    private final StatusBoard board = new StatusBoard(INTERVAL_MILLIS);

    /**
     * @param address the local event-bus address this verticle takes facts on ({@code address + ".query"}
     *                answers with the whole board)
     */
    public StatusVerticle(String address, StatusPage page) {
        this.address = address;
        this.page = page;
    }

    /** Local only: a fact never leaves this process, so the clustered event bus has nothing to look up. */
    private static final DeliveryOptions LOCAL = new DeliveryOptions().setLocalOnly(true);

    /** Sends one fact to the board at {@code address} in this process. */
    public static void post(io.vertx.core.Vertx vertx, String address, JsonObject fact) {
        vertx.eventBus().send(address, fact, LOCAL);
    }

    /** @return the local address on which the page asks for the whole board */
    static String queryAddress(String address) {
        return address + ".query";
    }

    @Override
    public Future<?> start() {
        var bus = vertx.eventBus();
        vertx.setPeriodic(INTERVAL_MILLIS, id -> tick());
        bus.<String>localConsumer(queryAddress(address),
                m -> m.reply(board.status(true, System.currentTimeMillis()).encode()));
        return bus.<JsonObject>localConsumer(address, m -> take(m.body())).completion();
    }

    private void take(JsonObject m) {
        long now = System.currentTimeMillis();
        try {
            switch (m.getString("kind", "")) {
                case "view" -> board.view(m);
                case "event" -> {
                    JsonObject e = m.copy().put("time", m.getLong("time", now));
                    e.remove("kind");
                    board.event(e);
                }
                case "report" -> board.report(m.getInteger("rank"), m.getLong("generation"),
                        new JsonObject(m.getString("report")), now);
                case "stalls" -> board.stalls(m.getJsonArray("stalls", new JsonArray()), now);
                default -> LOG.debug("status: dropped a message of kind '{}'", m.getString("kind"));
            }
        } catch (RuntimeException e) {
            // A report is a peer's JSON: one that is not what the board reads is dropped, the page goes on.
            LOG.debug("status: dropped a malformed {} message: {}", m.getString("kind"), e.toString());
        }
    }

    private void tick() {
        long now = System.currentTimeMillis();
        board.sample(now);
        if (page.hasListeners()) {
            page.publish(board.status(false, now).encode());
        }
    }
}
