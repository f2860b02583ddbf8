package dev.kolo.samples.cli;

import dev.kolo.runtime.FlightReport;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code flight analyse DIR} and {@code flight dump --url URL}: the flight recorder's files, read and asked for. */
@Command(name = "flight", description = "Works on the flight recorder's files (KOLO_FLIGHT_RECORDER): each rank's "
        + "last collective ops.", mixinStandardHelpOptions = true,
        subcommands = {FlightCommand.Analyse.class, FlightCommand.Dump.class})
final class FlightCommand implements Runnable {
    @Override
    public void run() {
        throw new IllegalArgumentException("name a subcommand: analyse or dump (see flight --help)");
    }

    @Command(name = "analyse", mixinStandardHelpOptions = true,
            description = "Reads every rank's flight-rank-R.json in DIR and prints the verdict first (a mismatched "
                    + "op, the first op some ranks never submitted and what they did instead, a rank that left no "
                    + "file, or the straggler), then the detail per rank.")
    static final class Analyse implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "DIR", description = "The directory of the ranks' files.")
        Path dir;

        @Option(names = "--stuck-after", paramLabel = "SECONDS", defaultValue = "10",
                description = "In files written on request, how long ranks must have waited on an op others never "
                        + "submitted for it to count as stuck (default: ${DEFAULT-VALUE}).")
        double stuckAfter;

        @Override
        public Integer call() {
            if (!(stuckAfter >= 0) || stuckAfter > 86400) {
                throw new IllegalArgumentException("--stuck-after must be 0 to 86400 seconds (got " + stuckAfter + ")");
            }
            FlightReport.analyse(dir, Duration.ofMillis((long) (stuckAfter * 1000))).forEach(System.out::println);
            return 0;
        }
    }

    @Command(name = "dump", mixinStandardHelpOptions = true,
            description = "Asks every worker of a running job for its flight recorder (each also writes its file to "
                    + "its KOLO_FLIGHT_DIR) and saves the files in --out, ready for flight analyse.")
    static final class Dump implements Callable<Integer> {
        @Option(names = "--url", required = true, paramLabel = "URL",
                description = "The status page of any worker of the job (its metrics port), e.g. http://host:9404/.")
        String url;

        @Option(names = "--out", paramLabel = "DIR", defaultValue = "flight",
                description = "Where to save the files (default: ${DEFAULT-VALUE}).")
        Path out;

        @Override
        public Integer call() throws IOException, InterruptedException {
            String base = url.endsWith("/") ? url : url + "/";
            HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
            JsonArray ranks = new JsonObject(get(http, base + "status", "the job's status")).getJsonArray("ranks");
            if (ranks == null || ranks.isEmpty()) {
                throw new IllegalArgumentException(base + " names no ranks yet: is the job running?");
            }
            Files.createDirectories(out);
            int saved = 0;
            for (int i = 0; i < ranks.size(); i++) {
                JsonObject r = ranks.getJsonObject(i);
                int rank = r.getInteger("rank", -1);
                String page = r.getString("statusUrl");
                if (page == null) {
                    System.out.println("rank " + rank + ": serves no metrics port (KOLO_METRICS_PORT=0): skipped");
                    continue;
                }
                try {
                    String json = get(http, (page.endsWith("/") ? page.substring(0, page.length() - 1) : page)
                            + FlightReport.PATH, "rank " + rank + "'s flight recorder");
                    Files.writeString(out.resolve(FlightReport.fileName(rank)), json);
                    saved++;
                } catch (IllegalArgumentException e) {
                    System.out.println("rank " + rank + ": " + e.getMessage());
                }
            }
            System.out.println("saved " + saved + " of " + ranks.size() + " ranks' files in " + out
                    + "; read them with: java -jar worker.jar flight analyse " + out);
            return saved > 0 ? 0 : 1;
        }

        /** GETs {@code uri} within 20 s (a stopped worker does not answer). */
        private static String get(HttpClient http, String uri, String what) throws InterruptedException {
            try {
                HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(uri))
                        .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() != 200) {
                    throw new IllegalArgumentException("cannot read " + what + " at " + uri + ": HTTP "
                            + r.statusCode() + " " + r.body().strip());
                }
                return r.body();
            } catch (IOException e) {
                throw new IllegalArgumentException("cannot read " + what + " at " + uri + " (" + e + "): is the "
                        + "worker running, and its metrics port reachable from here?", e);
            }
        }
    }
}
