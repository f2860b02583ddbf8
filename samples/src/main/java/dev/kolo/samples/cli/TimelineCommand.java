package dev.kolo.samples.cli;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.io.JsonEOFException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;

/** {@code timeline merge OUT RANK_FILE...}: the per-rank Chrome traces of a job as one trace. */
@Command(name = "timeline", description = "Works on the Chrome-trace timelines that KOLO_TIMELINE writes.",
        mixinStandardHelpOptions = true, subcommands = TimelineCommand.Merge.class)
final class TimelineCommand implements Runnable {
    @Override
    public void run() {
        throw new IllegalArgumentException("name a subcommand: merge (see timeline --help)");
    }

    @Command(name = "merge", mixinStandardHelpOptions = true,
            description = "Writes the events of every rank's trace (KOLO_TIMELINE with {rank}) into one trace that "
                    + "opens in Perfetto with every rank; the traces share one clock (wall-clock time). A trace cut "
                    + "short by a killed worker is read up to its last complete event.")
    static final class Merge implements Callable<Integer> {
        @Parameters(index = "0", paramLabel = "OUT", description = "The merged trace to write.")
        Path out;

        @Parameters(index = "1..*", arity = "1..*", paramLabel = "TRACE", description = "Per-rank traces.")
        List<Path> traces;

        @Override
        public Integer call() {
            long events = merge(traces, out);
            System.out.printf("merged %d events of %d traces into %s%n", events, traces.size(), out);
            return 0;
        }
    }

    /** @return how many events were written */
    static long merge(List<Path> traces, Path out) {
        JsonFactory json = new JsonFactory();
        long events = 0;
        try (JsonGenerator g = json.createGenerator(out.toFile(), JsonEncoding.UTF8)) {
            g.writeStartArray();
            for (Path trace : traces) {
                if (!Files.isRegularFile(trace)) {
                    throw new IllegalArgumentException("no trace file " + trace);
                }
                events += copyEvents(json, trace, g);
            }
            g.writeEndArray();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + out + ": " + e.getMessage(), e);
        }
        return events;
    }

    private static long copyEvents(JsonFactory json, Path trace, JsonGenerator g) throws IOException {
        long events = 0;
        try (JsonParser p = json.createParser(trace.toFile())) {
            if (p.nextToken() != JsonToken.START_ARRAY) {
                throw new IllegalArgumentException(trace + " is not a Chrome trace (a JSON array of events)");
            }
            while (p.nextToken() == JsonToken.START_OBJECT) {
                g.copyCurrentStructure(p);
                events++;
            }
        } catch (JsonEOFException cutShort) {
            // A killed worker's trace ends without its closing bracket, or inside the page being written.
        }
        return events;
    }
}
