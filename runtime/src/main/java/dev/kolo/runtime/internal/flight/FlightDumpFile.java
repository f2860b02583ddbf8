package dev.kolo.runtime.internal.flight;

import com.fasterxml.jackson.core.JsonEncoding;
import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonGenerator;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * A rank's flight recorder file, {@code flight-rank-R.json}: who wrote it and why ({@code trigger}: stall, failure,
 * signal or request, and the {@code reason} in words), when, and the ring's records oldest first. Written whole to a
 * temporary file and moved into place, so a reader never sees half a dump; read back for the analyser.
 */
public record FlightDumpFile(int rank, int size, String job, String host, long pid, String trigger, String reason,
                             long dumpedAtUs, int capacity, long recorded, List<FlightRecord> ops) {
    public static final String FORMAT = "kolo-flight/1";
    private static final JsonFactory JSON = new JsonFactory();

    /** @return the file name of rank {@code rank}'s dump */
    public static String fileName(int rank) {
        return "flight-rank-" + rank + ".json";
    }

    /** @return the dump as JSON text */
    public byte[] toJson() {
        ByteArrayOutputStream out = new ByteArrayOutputStream(256 + 400 * ops.size());
        try (JsonGenerator g = JSON.createGenerator(out, JsonEncoding.UTF8)) {
            g.writeStartObject();
            g.writeStringField("format", FORMAT);
            g.writeNumberField("rank", rank);
            g.writeNumberField("size", size);
            g.writeStringField("job", job);
            g.writeStringField("host", host);
            g.writeNumberField("pid", pid);
            g.writeStringField("trigger", trigger);
            g.writeStringField("reason", reason);
            g.writeNumberField("dumpedAtUs", dumpedAtUs);
            g.writeNumberField("capacity", capacity);
            g.writeNumberField("recorded", recorded);
            g.writeArrayFieldStart("ops");
            for (FlightRecord r : ops) {
                g.writeRaw('\n');
                write(g, r);
            }
            g.writeEndArray();
            g.writeEndObject();
        } catch (IOException e) {
            throw new UncheckedIOException(e); // in memory: cannot happen
        }
        return out.toByteArray();
    }

    private static void write(JsonGenerator g, FlightRecord r) throws IOException {
        g.writeStartObject();
        g.writeNumberField("seq", r.seq());
        g.writeStringField("name", r.name());
        g.writeNumberField("occurrence", r.occurrence());
        g.writeStringField("op", r.op());
        g.writeStringField("dtype", r.dtype());
        g.writeFieldName("shape");
        g.writeArray(r.shape(), 0, r.shape().length);
        g.writeNumberField("bytes", r.bytes());
        g.writeNumberField("set", r.set());
        g.writeNumberField("generation", r.generation());
        g.writeStringField("algorithm", r.algorithm());
        g.writeStringField("transport", r.transport());
        g.writeStringField("state", r.state().name().toLowerCase(java.util.Locale.ROOT));
        g.writeNumberField("submittedUs", r.submittedUs());
        g.writeNumberField("agreedUs", r.agreedUs());
        g.writeNumberField("startedUs", r.startedUs());
        g.writeNumberField("finishedUs", r.finishedUs());
        if (r.error() != null) {
            g.writeStringField("error", r.error());
        }
        g.writeEndObject();
    }

    /** Writes {@code json} as {@code dir/name}, whole or not at all. */
    public static Path write(Path dir, String name, byte[] json) throws IOException {
        Files.createDirectories(dir);
        Path target = dir.resolve(name);
        Path tmp = Files.createTempFile(dir, name, ".tmp");
        try {
            Files.write(tmp, json);
            try {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(tmp);
        }
        return target;
    }

    /**
     * Reads a dump.
     *
     * @throws IllegalArgumentException naming the file and what is wrong with it
     */
    public static FlightDumpFile read(Path file) {
        JsonObject o;
        try {
            o = new JsonObject(Files.readString(file));
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read " + file + ": " + e.getMessage(), e);
        } catch (DecodeException | ClassCastException e) {
            throw new IllegalArgumentException(file + " is not JSON (" + e.getMessage() + "); a flight recorder "
                    + "file is written by a worker (KOLO_FLIGHT_DIR) or by 'worker.jar flight dump'", e);
        }
        if (!FORMAT.equals(o.getString("format"))) {
            throw new IllegalArgumentException(file + " is not a flight recorder file (its format is "
                    + o.getString("format") + ", expected " + FORMAT + ")");
        }
        try {
            List<FlightRecord> ops = new ArrayList<>();
            JsonArray list = o.getJsonArray("ops", new JsonArray());
            for (int i = 0; i < list.size(); i++) {
                ops.add(record(list.getJsonObject(i)));
            }
            return new FlightDumpFile(o.getInteger("rank"), o.getInteger("size", 0), o.getString("job", ""), o.getString("host", ""),
                    o.getLong("pid", 0L), o.getString("trigger", ""), o.getString("reason", ""),
                    o.getLong("dumpedAtUs", 0L), o.getInteger("capacity", 0), o.getLong("recorded", 0L), ops);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(file + " is a damaged flight recorder file: " + e, e);
        }
    }

    private static FlightRecord record(JsonObject r) {
        JsonArray s = r.getJsonArray("shape");
        long[] shape = new long[s.size()];
        for (int i = 0; i < shape.length; i++) {
            shape[i] = s.getLong(i);
        }
        return new FlightRecord(r.getLong("seq"), r.getString("name"), r.getInteger("occurrence"),
                r.getString("op"), r.getString("dtype"), shape, r.getLong("bytes", 0L), r.getInteger("set", 0),
                r.getLong("generation", 0L), r.getString("algorithm"), r.getString("transport"),
                FlightRecord.State.valueOf(r.getString("state").toUpperCase(java.util.Locale.ROOT)),
                r.getLong("submittedUs", 0L), r.getLong("agreedUs", 0L), r.getLong("startedUs", 0L),
                r.getLong("finishedUs", 0L), r.getString("error"));
    }
}
