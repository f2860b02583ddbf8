package dev.kolo.elastic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.testing.HeadlessChromium;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openqa.selenium.WebElement;

/**
 * The status page of an elastic job of three, in a real headless Chromium, with the metrics port at its default:
 * the last commit shows, and after a worker is SIGKILLed the generation history shows its loss and the regroup
 * of the survivors, the rank table shrinks to the new generation, and {@code /status} says the same.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ElasticStatusPageTest {
    @Test
    void theHistoryShowsALostWorkerAndTheRegroup() throws Exception {
        try (WorkerProcesses job = new WorkerProcesses(3, 2, 3).unset("KOLO_METRICS_PORT");
             HeadlessChromium browser = HeadlessChromium.start()) {
            job.training(1 << 12, 1_000_000, 40);
            job.startAll(3);
            List<String> ready = job.awaitEach(0, 3, 60, "ready", l -> l.contains("ew ready "));
            String jobPage = WorkerProcesses.field(ready.get(0), "job");
            int victim = ready.stream().filter(l -> !WorkerProcesses.field(l, "page").equals(jobPage))
                    .map(WorkerProcesses::index).findFirst().orElseThrow();
            job.awaitEach(0, 3, 60, "step 2", l -> l.contains("ew step=2 "));
            browser.driver.get(jobPage);
            browser.await(20, "three rank rows", d -> browser.all("#ranks tr.rank-row").size() == 3);
            browser.await(20, "the last commit", d -> !text(browser, "#commit-last").contains("none"));
            long generation = status(jobPage).getLong("generation");

            job.kill(victim);
            String lost = browser.await(30, "the loss in the history", d -> {
                WebElement e = first(browser, "#history li.event-lost");
                return e == null ? null : e.getText();
            });
            assertTrue(lost.contains("left"), lost);
            browser.await(30, "the regroup in the history", d -> browser.all("#history li.event-formed").size() >= 2);
            browser.await(30, "two rank rows, all running", d -> browser.all("#ranks tr.rank-row").size() == 2
                    && browser.all("#ranks tr.rank-row").stream().allMatch(r -> r.getText().contains("running")));
            browser.screenshot("status-elastic");

            JsonObject status = status(jobPage);
            assertEquals(2, status.getInteger("size"));
            assertTrue(status.getLong("generation") > generation, status.encode());
            JsonArray history = status.getJsonArray("history");
            List<String> events = history.stream().map(e -> ((JsonObject) e).getString("event")).toList();
            int lostAt = events.indexOf("lost");
            assertTrue(lostAt >= 0 && events.subList(lostAt, events.size()).contains("formed"), events.toString());
            JsonObject formed = history.getJsonObject(events.lastIndexOf("formed"));
            assertEquals(2, formed.getInteger("size"));
            assertFalse(formed.getString("reason").isBlank(), formed.encode());
            assertNotNull(status.getJsonObject("lastCommit"), status.encode());
        }
    }

    private static WebElement first(HeadlessChromium browser, String css) {
        List<WebElement> found = browser.all(css);
        return found.isEmpty() ? null : found.get(0);
    }

    private static String text(HeadlessChromium browser, String css) {
        List<WebElement> found = browser.all(css);
        return found.isEmpty() ? "none" : found.get(0).getText();
    }

    private static JsonObject status(String page) {
        return dev.kolo.testing.StatusJson.get(page);
    }
}
