package dev.kolo.runtime.internal.autotune;

import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code KOLO_AUTOTUNE_LOG}: one CSV row per sample, written as it is taken (so a job that dies mid-search leaves
 * what it measured): the sample's number, what it was for (warm-up, the knob explored or confirmed, or final),
 * the values tried, the bytes and seconds it covered and its score.
 */
final class AutotuneLog implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AutotuneLog.class);
    static final String HEADER = "sample,phase,fusion_threshold_bytes,eager_op_bytes,cycle_time_us,bytes,seconds,"
            + "score_bytes_per_second";

    private final Path path;
    private BufferedWriter out;

    private boolean opened;

    /** @param path the file, created or truncated at the first row (on the thread that samples); null for none */
    AutotuneLog(Path path) {
        this.path = path;
    }

    /** Creates the file and writes the header, once; a failure leaves {@link #out} null and says why. */
    private void open() {
        opened = true;
        if (path == null) {
            return;
        }
        try {
            Path parent = path.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            out = Files.newBufferedWriter(path, StandardCharsets.UTF_8);
            out.write(HEADER);
            out.newLine();
            out.flush();
        } catch (IOException e) {
            LOG.warn("autotune: cannot write the log {} ({}); tuning goes on without it (KOLO_AUTOTUNE_LOG)", path,
                    e.getMessage());
            out = null;
        }
    }

    void row(int sample, String phase, TunedValues v, long bytes, double seconds, double score) {
        if (!opened) {
            open(); // here, not where the tuner is made: that is the event loop, which must not wait for a disk
        }
        if (out == null) {
            return;
        }
        try {
            out.write(String.format(Locale.ROOT, "%d,%s,%d,%d,%d,%d,%.6f,%.1f", sample, phase, v.fusionThreshold(),
                    v.eagerOpBytes(), v.cycleMicros(), bytes, seconds, score));
            out.newLine();
            out.flush();
        } catch (IOException e) {
            LOG.warn("autotune: cannot write the log {} ({}); it stops here", path, e.getMessage());
            close();
        }
    }

    @Override
    public void close() {
        opened = true; // no row after the end
        if (out != null) {
            try {
                out.close();
            } catch (IOException e) {
                LOG.debug("autotune: closing {}: {}", path, e.getMessage());
            }
            out = null;
        }
    }
}
