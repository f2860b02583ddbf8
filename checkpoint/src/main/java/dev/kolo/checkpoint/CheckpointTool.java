package dev.kolo.checkpoint;

import dev.kolo.checkpoint.internal.format.CheckpointReader;
import dev.kolo.checkpoint.internal.format.Crc;
import dev.kolo.checkpoint.internal.format.Json;
import dev.kolo.checkpoint.internal.format.Manifest;
import dev.kolo.checkpoint.internal.format.TensorEntry;
import dev.kolo.checkpoint.internal.store.FileSync;
import dev.kolo.checkpoint.internal.store.LatestPointer;
import dev.kolo.checkpoint.internal.store.LocalDirectoryStore;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The {@code checkpoint ls|inspect|verify DIR} commands, without the job running. Each method returns
 * the process exit code: {@link #OK}, {@link #CORRUPT} (verification failed, or nothing to verify) or
 * {@link #USAGE} (missing path, not a checkpoint directory). Errors are one line on {@code err}, never a
 * stack trace. Also runnable on its own: {@code java -cp ... dev.kolo.checkpoint.CheckpointTool ls DIR}.
 */
public final class CheckpointTool {
    /** Exit code: success. */
    public static final int OK = 0;
    /** Exit code: a checkpoint failed verification or could not be read. */
    public static final int CORRUPT = 1;
    /** Exit code: the path is missing or not a checkpoint directory. */
    public static final int USAGE = 2;

    /** Creates the tool; it holds no state. */
    public CheckpointTool() {
    }

    /**
     * Lists the committed checkpoints of {@code dir}, newest first: step, generation, epoch, tensor count,
     * size, creation time and name, marking the one {@code latest} points to. Reads manifests only.
     */
    public int ls(Path dir, PrintStream out, PrintStream err) {
        Target t = resolve("ls", dir, err);
        if (t == null) {
            return USAGE;
        }
        try {
            List<CheckpointId> ids = t.ids();
            if (ids.isEmpty()) {
                out.println("no checkpoints in " + t.root());
                return OK;
            }
            Optional<CheckpointId> latest = t.store().latestPointer();
            out.printf(Locale.ROOT, "%-12s %-6s %-8s %-8s %-12s %-24s %s%n", "STEP", "GEN", "EPOCH", "TENSORS", "SIZE",
                    "CREATED", "NAME");
            for (CheckpointId id : ids) {
                Path p = t.store().pathOf(id);
                long bytes = sizeOf(p);
                String mark = latest.isPresent() && latest.get().equals(id) ? "  (latest)" : "";
                try (StoredCheckpoint sc = t.store().open(id)) {
                    Manifest m = CheckpointReader.readManifest(sc);
                    out.printf(Locale.ROOT, "%-12d %-6d %-8d %-8d %-12s %-24s %s%s%n", id.step(), id.generation(),
                            m.epoch(), m.tensors().size(), human(bytes), m.createdAt().truncatedTo(ChronoUnit.SECONDS), id.name(), mark);
                } catch (CorruptCheckpointException e) {
                    out.printf(Locale.ROOT, "%-12d %-6d %-8s %-8s %-12s %-24s %s%s  CORRUPT: %s%n", id.step(),
                            id.generation(), "?", "?", human(bytes), "?", id.name(), mark, e.getMessage());
                }
            }
            int leftovers = leftovers(t.root());
            if (leftovers > 0) {
                out.println(leftovers + " incomplete write(s) (.tmp-*/.del-*) in " + t.root()
                        + ": ignored by readers, removed by the next writer");
            }
            return OK;
        } catch (IOException e) {
            err.println("checkpoint ls: cannot read " + t.root() + ": " + FileSync.reason(e));
            return USAGE;
        }
    }

    /**
     * Prints the manifest of one checkpoint: {@code path} is a checkpoint's own directory, or a checkpoint
     * directory (then the one {@code latest} points to, else the newest). Checks the manifest's checksum
     * but not the tensor data (that is {@link #verify}).
     */
    public int inspect(Path path, PrintStream out, PrintStream err) {
        Target t = resolve("inspect", path, err);
        if (t == null) {
            return USAGE;
        }
        try {
            CheckpointId id;
            if (t.single() != null) {
                id = t.single();
            } else {
                List<CheckpointId> ids = t.ids();
                if (ids.isEmpty()) {
                    err.println("checkpoint inspect: no checkpoints in " + t.root());
                    return CORRUPT;
                }
                id = t.store().latestPointer().filter(ids::contains).orElse(ids.get(0));
            }
            try (StoredCheckpoint sc = t.store().open(id)) {
                Manifest m = CheckpointReader.readManifest(sc);
                printManifest(m, sc.location(), out);
                return OK;
            }
        } catch (CorruptCheckpointException e) {
            err.println("checkpoint inspect: " + printable(e.getMessage()));
            return CORRUPT;
        } catch (IOException e) {
            err.println("checkpoint inspect: cannot read " + t.root() + ": " + FileSync.reason(e));
            return CORRUPT;
        }
    }

    /**
     * Verifies every checkpoint of {@code dir} (or the one checkpoint {@code dir} is): manifest checksum
     * and fields, data size, header, and every tensor's CRC32C. One line per checkpoint, one per problem.
     *
     * @return {@link #OK} if all verify; {@link #CORRUPT} if any does not, or there is none
     */
    public int verify(Path dir, PrintStream out, PrintStream err) {
        Target t = resolve("verify", dir, err);
        if (t == null) {
            return USAGE;
        }
        List<CheckpointId> ids;
        try {
            ids = t.single() != null ? List.of(t.single()) : t.ids();
        } catch (IOException e) {
            err.println("checkpoint verify: cannot read " + t.root() + ": " + FileSync.reason(e));
            return USAGE;
        }
        if (ids.isEmpty()) {
            err.println("checkpoint verify: no checkpoints in " + t.root());
            return CORRUPT;
        }
        int bad = 0;
        CheckpointId newestGood = null;
        for (CheckpointId id : ids) {
            try (StoredCheckpoint sc = t.store().open(id)) {
                CheckpointReader.Verified v = CheckpointReader.verify(sc);
                if (v.ok()) {
                    out.printf(Locale.ROOT, "OK       %s  %d tensors, %s%n", id.name(), v.manifest().tensors().size(),
                            human(v.manifest().dataBytes()));
                    if (newestGood == null) {
                        newestGood = id;
                    }
                } else {
                    bad++;
                    out.printf(Locale.ROOT, "CORRUPT  %s  %d of %d tensors damaged%n", id.name(), v.problems().size(),
                            v.manifest().tensors().size());
                    for (CorruptCheckpointException p : v.problems()) {
                        out.println("         " + printable(p.getMessage()));
                    }
                }
            } catch (CorruptCheckpointException e) {
                bad++;
                out.println("CORRUPT  " + id.name() + "  " + printable(e.getMessage()));
            } catch (IOException | RuntimeException e) {
                bad++;
                out.println("UNREADABLE " + id.name() + "  " + FileSync.reason(e));
            }
        }
        if (t.single() == null) {
            Optional<CheckpointId> latest = t.store().latestPointer();
            if (Files.exists(t.root().resolve(LatestPointer.FILE)) && (latest.isEmpty() || !ids.contains(latest.get()))) {
                out.println("note: the latest pointer names no committed checkpoint (" + latest.map(CheckpointId::name)
                        .orElse("unreadable") + "); readers do not depend on it");
            }
        }
        out.printf(Locale.ROOT, "%d checkpoint(s): %d ok, %d corrupt%s%n", ids.size(), ids.size() - bad, bad,
                newestGood == null ? "" : "; newest loadable: " + newestGood.name());
        if (bad > 0) {
            err.println("checkpoint verify: " + bad + " of " + ids.size() + " checkpoint(s) in " + t.root()
                    + " failed verification");
            return CORRUPT;
        }
        return OK;
    }

    /** Runs {@code ls|inspect|verify PATH}; for use without the worker jar. */
    public int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length != 2) {
            err.println("usage: checkpoint ls|inspect|verify DIR");
            return USAGE;
        }
        Path p = Path.of(args[1]);
        switch (args[0]) {
            case "ls":
                return ls(p, out, err);
            case "inspect":
                return inspect(p, out, err);
            case "verify":
                return verify(p, out, err);
            default:
                err.println("checkpoint: unknown command '" + args[0] + "' (expected ls, inspect or verify)");
                return USAGE;
        }
    }

    /** {@code java -cp ... dev.kolo.checkpoint.CheckpointTool ls|inspect|verify DIR} */
    // ------------------------------------------------------------------ helpers

    /** What a path given on the command line is: a checkpoint directory, or one checkpoint inside one. */
    private record Target(Path root, LocalDirectoryStore store, CheckpointId single) {
        List<CheckpointId> ids() throws IOException {
            return store.list();
        }
    }

    private static Target resolve(String command, Path path, PrintStream err) {
        Path p = path.toAbsolutePath().normalize();
        if (!Files.exists(p)) {
            err.println("checkpoint " + command + ": no such directory: " + p);
            return null;
        }
        if (Files.isRegularFile(p) && (p.getFileName().toString().equals(Manifest.MANIFEST_FILE)
                || p.getFileName().toString().equals(Manifest.DATA_FILE)) && p.getParent() != null) {
            p = p.getParent();
        }
        if (!Files.isDirectory(p)) {
            err.println("checkpoint " + command + ": not a directory: " + p);
            return null;
        }
        Optional<CheckpointId> self = CheckpointId.parse(p.getFileName() == null ? "" : p.getFileName().toString());
        if (self.isPresent() && p.getParent() != null) {
            return new Target(p.getParent(), new LocalDirectoryStore(p.getParent()), self.get());
        }
        try {
            if (!looksLikeCheckpointDir(p)) {
                err.println("checkpoint " + command + ": not a checkpoint directory: " + p
                        + " (no ckpt-s<step>-g<generation> subdirectories and no latest file)");
                return null;
            }
        } catch (IOException e) {
            err.println("checkpoint " + command + ": cannot read " + p + ": " + FileSync.reason(e));
            return null;
        }
        return new Target(p, new LocalDirectoryStore(p), null);
    }

    /** Empty directories count: a job may not have saved yet. */
    private static boolean looksLikeCheckpointDir(Path dir) throws IOException {
        boolean empty = true;
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            for (Path e : s) {
                empty = false;
                String n = e.getFileName().toString();
                if (CheckpointId.parse(n).isPresent() || n.equals(LatestPointer.FILE)
                        || n.startsWith(LocalDirectoryStore.TEMP_PREFIX)) {
                    return true;
                }
            }
        }
        return empty;
    }

    private static int leftovers(Path dir) throws IOException {
        int n = 0;
        try (DirectoryStream<Path> s = Files.newDirectoryStream(dir)) {
            for (Path e : s) {
                String name = e.getFileName().toString();
                if (name.startsWith(LocalDirectoryStore.TEMP_PREFIX) || name.startsWith(LocalDirectoryStore.DELETE_PREFIX)) {
                    n++;
                }
            }
        }
        return n;
    }

    private static long sizeOf(Path checkpointDir) {
        long n = 0;
        for (String f : new String[] {Manifest.DATA_FILE, Manifest.MANIFEST_FILE}) {
            try {
                n += Files.size(checkpointDir.resolve(f));
            } catch (IOException e) {
                // missing file: shown as smaller; verify reports it
            }
        }
        return n;
    }

    private static void printManifest(Manifest m, String location, PrintStream out) {
        out.println("checkpoint   " + location);
        out.println("format       " + Manifest.FORMAT_NAME + " " + m.formatVersion() + " (manifest checksum OK)");
        out.println("job          " + m.job());
        out.println("step         " + m.id().step());
        out.println("epoch        " + m.epoch());
        out.println("generation   " + m.id().generation());
        out.println("world size   " + m.worldSize());
        out.println("created      " + m.createdAt());
        out.println("uuid         " + m.uuid());
        out.println("data         " + Manifest.DATA_FILE + ", " + m.dataBytes() + " bytes (" + human(m.dataBytes())
                + "), little-endian, 64-byte aligned");
        out.println("metadata     " + m.metadataJson());
        out.println("scalars      " + m.scalars().size());
        for (Map.Entry<String, Object> s : m.scalars().entrySet()) {
            Object v = s.getValue();
            String type = v instanceof Long ? "long" : v instanceof Double ? "double" : "string";
            out.printf(Locale.ROOT, "  %-30s %-7s %s%n", s.getKey(), type, v instanceof String str ? Json.write(str) : v);
        }
        out.println("tensors      " + m.tensors().size() + ", " + m.tensorBytes() + " bytes (" + human(m.tensorBytes())
                + ")");
        if (!m.tensors().isEmpty()) {
            out.printf(Locale.ROOT, "  %-30s %-9s %-20s %14s %14s  %s%n", "NAME", "DTYPE", "SHAPE", "OFFSET", "LENGTH",
                    "CRC32C");
            for (TensorEntry t : m.tensors()) {
                out.printf(Locale.ROOT, "  %-30s %-9s %-20s %14d %14d  %s%n", t.name(), t.dtype(), t.shapeString(),
                        t.offset(), t.length(), Crc.hex(t.crc32c()));
            }
        }
    }

    static String human(long bytes) {
        if (bytes < 1024) {
            return bytes + " B";
        }
        String[] units = {"KiB", "MiB", "GiB", "TiB"};
        double v = bytes;
        int u = -1;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    /**
     * A message as one can read it on a terminal: a damaged file's bytes that a message quotes (a field, a name)
     * may hold control characters, shown escaped (a tab as backslash-t, others as a Unicode escape) so that they cannot reshape the
     * output or pass for something else (a tab and "at " read as a stack trace). Line breaks stay.
     */
    static String printable(String message) {
        if (message == null) {
            return "";
        }
        StringBuilder b = null;
        for (int i = 0; i < message.length(); i++) {
            char c = message.charAt(i);
            boolean control = (c < 0x20 && c != '\n') || c == 0x7f;
            if (control && b == null) {
                b = new StringBuilder(message.length() + 16).append(message, 0, i);
            }
            if (b != null) {
                if (!control) {
                    b.append(c);
                } else if (c == '\t') {
                    b.append("\\t");
                } else if (c == '\r') {
                    b.append("\\r");
                } else {
                    b.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
                }
            }
        }
        return b == null ? message : b.toString();
    }
}
