package dev.kolo.samples.mnist;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.train.Compression;
import dev.kolo.runtime.train.LrScaling;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Grafana dashboard plots only what a worker really serves: a short training run with checkpoints,
 * scraped over HTTP, must expose every {@code kolo_*} series the dashboard's queries name, with values
 * that reflect the run.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class DashboardMetricsTest {

    @Test
    void everyDashboardSeriesIsServedAfterTraining(@TempDir Path dir) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
            port = s.getLocalPort();
        }
        KoloConfig config = KoloConfig.builder().jobName("dash-" + UUID.randomUUID().toString().substring(0, 8))
                .set(Settings.CLUSTER_PORT, 12000 + 20 * new Random().nextInt(480)).metricsPort(port).build();
        FashionMnist data = FashionMnist.load(FashionMnist.DEBIAN_DIR);
        TrainSettings settings = new TrainSettings(1, 32, 0.05, LrScaling.LINEAR, -1, true, Compression.NONE, 1, 7,
                0, 10, new int[] {64}, 0.9, 0, 2000, 500, dir.resolve("ckpt"), 20, 10, TrainSettings.MLP, 1, "sgd",
                dev.kolo.runtime.ReduceOp.AVERAGE, -1, 1);
        Map<String, Double> scraped;
        Set<String> servedLabels = new TreeSet<>();
        try (Kolo kolo = Kolo.init(config);
             PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8)) {
            Trainer trainer = new Trainer(kolo, data, settings, out, false);
            TrainResult r;
            try (TrainingState state = new TrainingState(kolo, trainer.model(), trainer.rule(), trainer.sampler(), settings,
                    TrainingJob.LEAVE_TIMEOUT)) {
                r = trainer.run(state);
            }
            assertTrue(r.steps() > 0, r.toString());
            HttpResponse<String> metrics = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/metrics")).timeout(Duration.ofSeconds(10)).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertEquals(200, metrics.statusCode());
            scraped = parse(metrics.body());
            Matcher label = Pattern.compile("[{,]([a-zA-Z_][a-zA-Z0-9_]*)=\"").matcher(metrics.body().replaceAll(
                    "(?m)^#.*$", ""));
            while (label.find()) {
                servedLabels.add(label.group(1));
            }
        }

        String dashboard = Files.readString(repoRoot().resolve("k8s-manifests/grafana/kolo-dashboard.json"));
        Set<String> wanted = new TreeSet<>();
        // Series names, not labels (a label such as kolo_job is followed by '=').
        Matcher m = Pattern.compile("kolo_[a-z0-9_]+(?![a-z0-9_]|=)").matcher(dashboard);
        while (m.find()) {
            wanted.add(m.group());
        }
        // label_values(series, label) names a label, not a series.
        Matcher labelValues = Pattern.compile("label_values\\([a-z0-9_]+, *([a-z0-9_]+)\\)").matcher(dashboard);
        while (labelValues.find()) {
            wanted.remove(labelValues.group(1));
        }
        assertTrue(wanted.size() >= 10, "the dashboard names Kolo's series: " + wanted);
        Set<String> missing = new TreeSet<>(wanted);
        missing.removeAll(scraped.keySet());
        assertTrue(missing.isEmpty(), "the dashboard queries series no worker serves: " + missing);

        // Labels: those the queries select on are served, and none is one Prometheus sets on every series itself
        // (a target's own "job" would be renamed to exported_job and the queries would match nothing).
        Set<String> selected = new TreeSet<>();
        Matcher sel = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=~?\\\\\"").matcher(dashboard);
        while (sel.find()) {
            selected.add(sel.group(1));
        }
        assertTrue(selected.contains("kolo_job"), "the dashboard selects the job: " + selected);
        assertTrue(servedLabels.containsAll(selected), "the dashboard selects on labels " + selected
                + "; the worker serves " + servedLabels);
        assertTrue(java.util.Collections.disjoint(servedLabels, Set.of("job", "instance")),
                "a served label clashes with one Prometheus sets: " + servedLabels);

        assertTrue(scraped.get("kolo_train_test_accuracy") > 0.5, "accuracy of the run: " + scraped);
        assertTrue(scraped.get("kolo_train_samples_per_second") > 0);
        assertTrue(scraped.get("kolo_train_loss") > 0 && scraped.get("kolo_train_loss") < 3);
        assertTrue(scraped.get("kolo_checkpoint_save_seconds_count") >= 1, "checkpoints were saved");
        assertTrue(scraped.get("kolo_checkpoint_save_bytes_total") > 0);
    }

    /** Series name (without labels) to the sum of its samples. */
    private static Map<String, Double> parse(String text) {
        Map<String, Double> out = new HashMap<>();
        for (String line : text.split("\n")) {
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            int end = line.indexOf('{');
            int space = line.lastIndexOf(' ');
            String name = line.substring(0, end >= 0 ? end : line.indexOf(' '));
            out.merge(name, Double.parseDouble(line.substring(space + 1)), Double::sum);
        }
        return out;
    }

    private static Path repoRoot() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("k8s-manifests")) && Files.isDirectory(p.resolve("samples"))) {
                return p;
            }
        }
        throw new IllegalStateException("no k8s-manifests/ above " + Path.of("").toAbsolutePath());
    }
}
