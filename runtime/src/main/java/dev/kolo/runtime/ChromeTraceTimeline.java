package dev.kolo.runtime;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Chrome trace (JSON array of events, opens in Perfetto and chrome://tracing): one process per rank, one
 * track per tensor. A background thread writes the events; each write replaces the closing bracket and
 * appends it again in a single positioned write, so the file is valid JSON after every event, even if the
 * process is killed. When the queue is full, events are dropped and counted rather than blocking training.
 */
final class ChromeTraceTimeline implements Timeline {
    private static final Logger LOG = LoggerFactory.getLogger(ChromeTraceTimeline.class);
    private static final int QUEUE = 65536;

    private final FileChannel file;
    private final BlockingQueue<Event> queue = new ArrayBlockingQueue<>(QUEUE);
    private final Thread writer;
    private final long originNanos = System.nanoTime();
    private final Map<String, Integer> tracks = new HashMap<>();
    private final AtomicLong dropped = new AtomicLong();
    private final int pid;
    private long position;
    private boolean first = true;
    private volatile boolean closed;

    private record Event(String tensor, String name, long startNanos, long endNanos, boolean instant) {
    }

    ChromeTraceTimeline(Path path, int rank) {
        try {
            Path parent = path.toAbsolutePath().getParent();
            if (parent != null) {
                java.nio.file.Files.createDirectories(parent);
            }
            this.file = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING);
            this.position = file.write(ByteBuffer.wrap("[\n]".getBytes(StandardCharsets.UTF_8)), 0) - 1;
        } catch (IOException e) {
            throw new KoloException("cannot write the timeline to " + path + " (" + e.getMessage()
                    + "); fix KOLO_TIMELINE or unset it");
        }
        this.pid = rank;
        this.writer = new Thread(this::drain, "kolo-timeline");
        this.writer.setDaemon(true);
        this.writer.start();
        write(metadata("process_name", -1, "rank " + rank));
    }

    @Override
    public boolean enabled() {
        return true;
    }

    @Override
    public void span(String tensor, String phase, long startNanos, long endNanos) {
        offer(new Event(tensor, phase, startNanos, endNanos, false));
    }

    @Override
    public void instant(String tensor, String what, long atNanos) {
        offer(new Event(tensor, what, atNanos, atNanos, true));
    }

    private void offer(Event e) {
        if (!closed && !queue.offer(e)) {
            dropped.incrementAndGet();
        }
    }

    private void drain() {
        while (!closed || !queue.isEmpty()) {
            try {
                Event e = queue.poll(100, TimeUnit.MILLISECONDS);
                if (e != null) {
                    write(format(e));
                }
            } catch (InterruptedException ie) {
                return;
            }
        }
    }

    private String format(Event e) {
        Integer tid = tracks.get(e.tensor);
        StringBuilder out = new StringBuilder();
        if (tid == null) {
            tid = tracks.size() + 1;
            tracks.put(e.tensor, tid);
            out.append(metadata("thread_name", tid, e.tensor)).append(",\n");
        }
        double ts = (e.startNanos - originNanos) / 1000.0;
        out.append("{\"name\":\"").append(escape(e.name)).append("\",\"ph\":\"").append(e.instant ? "i" : "X")
                .append("\",\"pid\":").append(pid).append(",\"tid\":").append(tid)
                .append(",\"ts\":").append(String.format(java.util.Locale.ROOT, "%.3f", ts));
        if (e.instant) {
            out.append(",\"s\":\"t\"");
        } else {
            out.append(",\"dur\":").append(String.format(java.util.Locale.ROOT, "%.3f",
                    (e.endNanos - e.startNanos) / 1000.0));
        }
        return out.append('}').toString();
    }

    private String metadata(String kind, int tid, String name) {
        return "{\"name\":\"" + kind + "\",\"ph\":\"M\",\"pid\":" + pid + (tid >= 0 ? ",\"tid\":" + tid : "")
                + ",\"args\":{\"name\":\"" + escape(name) + "\"}}";
    }

    /** Overwrites the closing bracket with the event and a new closing bracket, in one write. */
    private synchronized void write(String event) {
        byte[] bytes = ((first ? "" : ",\n") + event + "\n]").getBytes(StandardCharsets.UTF_8);
        first = false;
        try {
            ByteBuffer b = ByteBuffer.wrap(bytes);
            long at = position;
            while (b.hasRemaining()) {
                at += file.write(b, at);
            }
            position += bytes.length - 1;
        } catch (IOException e) {
            if (!closed) {
                LOG.warn("timeline write failed, disabling it: {}", e.toString());
                closed = true;
            }
        }
    }

    static String escape(String s) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }

    long dropped() {
        return dropped.get();
    }

    @Override
    public void close() {
        closed = true;
        try {
            writer.join(5000);
            file.force(true);
            file.close();
        } catch (InterruptedException | IOException e) {
            Thread.currentThread().interrupt();
        }
        if (dropped.get() > 0) {
            LOG.warn("timeline dropped {} events (writer could not keep up)", dropped.get());
        }
    }
}
