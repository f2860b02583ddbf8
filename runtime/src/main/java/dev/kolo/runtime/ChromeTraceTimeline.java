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
    private static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(20);

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
        write(",\n" + metadata("process_name", -1, "rank " + rank));
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

    /**
     * Writes whatever has queued up, then sleeps {@link #LINGER_NANOS}: the writer never blocks on the queue,
     * so recording an event never wakes a thread, and a busy job costs one file write per batch. A killed
     * worker loses at most the last linger's events; the file stays valid JSON.
     */
    private void drain() {
        java.util.ArrayList<Event> batch = new java.util.ArrayList<>(1024);
        StringBuilder out = new StringBuilder(1 << 16);
        while (true) {
            boolean last = closed;
            queue.drainTo(batch);
            if (!batch.isEmpty()) {
                out.setLength(0);
                for (Event e : batch) {
                    format(e, out);
                }
                batch.clear();
                write(out);
            }
            if (last) {
                return;
            }
            java.util.concurrent.locks.LockSupport.parkNanos(LINGER_NANOS);
        }
    }

    /** Appends the event (and its track's name on first use), each preceded by a separator. */
    private void format(Event e, StringBuilder out) {
        Integer tid = tracks.get(e.tensor);
        if (tid == null) {
            tid = tracks.size() + 1;
            tracks.put(e.tensor, tid);
            out.append(",\n").append(metadata("thread_name", tid, e.tensor));
        }
        out.append(",\n{\"name\":\"").append(escape(e.name)).append("\",\"ph\":\"").append(e.instant ? "i" : "X")
                .append("\",\"pid\":").append(pid).append(",\"tid\":").append(tid).append(",\"ts\":");
        micros(e.startNanos - originNanos, out);
        if (e.instant) {
            out.append(",\"s\":\"t\"");
        } else {
            out.append(",\"dur\":");
            micros(e.endNanos - e.startNanos, out);
        }
        out.append('}');
    }

    /** Nanoseconds as microseconds with three decimals, without String.format's cost. */
    static void micros(long nanos, StringBuilder out) {
        if (nanos < 0) {
            out.append('-');
            nanos = -nanos;
        }
        long frac = nanos % 1000;
        out.append(nanos / 1000).append('.');
        if (frac < 100) {
            out.append('0');
        }
        if (frac < 10) {
            out.append('0');
        }
        out.append(frac);
    }

    private String metadata(String kind, int tid, String name) {
        return "{\"name\":\"" + kind + "\",\"ph\":\"M\",\"pid\":" + pid + (tid >= 0 ? ",\"tid\":" + tid : "")
                + ",\"args\":{\"name\":\"" + escape(name) + "\"}}";
    }

    /**
     * Overwrites the closing bracket with {@code events} (each starting with ",\n") and a new closing bracket,
     * in one positioned write.
     */
    private synchronized void write(CharSequence events) {
        CharSequence body = first ? events.subSequence(2, events.length()) : events; // no separator before the first
        first = false;
        byte[] bytes = (body + "\n]").getBytes(StandardCharsets.UTF_8);
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
            }
            closed = true;
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
        java.util.concurrent.locks.LockSupport.unpark(writer);
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
