package dev.kolo.testing;

import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/** A worker's status facts, as its page reads them: {@code GET <page>status}, which must answer 200 within 10 s. */
public final class StatusJson {
    private StatusJson() {
    }

    /** @param page a status page's address, ending in '/' ({@code Kolo.statusUrl()}) */
    public static JsonObject get(String page) {
        try {
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(page + "status"))
                    .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new AssertionError("GET " + page + "status answered " + r.statusCode() + ": " + r.body());
            }
            return new JsonObject(r.body());
        } catch (java.io.IOException e) {
            throw new AssertionError("GET " + page + "status: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("GET " + page + "status interrupted", e);
        }
    }
}
