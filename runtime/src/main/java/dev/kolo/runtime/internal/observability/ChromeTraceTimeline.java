package dev.kolo.runtime.internal.observability;

import dev.kolo.runtime.KoloException;
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
 * track per tensor, timestamps in wall-clock microseconds since the epoch (every rank on one clock). A background thread writes the events. When the queue is full, events are dropped and
 * counted rather than blocking training.
 *
 * <p>A killed worker leaves complete events only: the file is written in whole 4 KiB pages at page-aligned
 * offsets, one write per page (the page being filled is rewritten, padded with spaces, until it is full), and
 * no event is split across pages. A write within one page is all or nothing even if the process is killed
 * during it, since Linux checks for a fatal signal only between the pages of a write. The closing bracket,
 * which the trace format makes optional, is written by {@link #close()}: a killed worker's file is the events
 * written so far without it.
 */
public final class ChromeTraceTimeline implements Timeline {
    private static final Logger LOG = LoggerFactory.getLogger(ChromeTraceTimeline.class);
    private static final int QUEUE = 65536;
    private static final long LINGER_NANOS = TimeUnit.MILLISECONDS.toNanos(20);
    /** The unit of an all-or-nothing write. */
    static final int PAGE = 4096;

    private final FileChannel file;
    private final BlockingQueue<Event> queue = new ArrayBlockingQueue<>(QUEUE);
    private final Thread writer;
    /**
     * The trace's clock: wall-clock nanoseconds since the epoch at {@link #originNanos}, so that the traces of
     * different ranks (and processes) lie on one clock and can be merged ({@code worker.jar timeline merge}).
     */
    private final long originNanos = System.nanoTime();
    private final long originEpochNanos = epochNanos();
    /**
     * The track of each tensor, for the first {@link #MAX_TRACKS} tensors; the events of later ones share one more
     * track and name their tensor in their arguments (a job that names tensors by step must not grow this, nor
     * the trace's list of tracks, with every step).
     */
    private final Map<String, Integer> tracks = new HashMap<>();
    static final int MAX_TRACKS = 4096;
    private static final int SHARED_TRACK = MAX_TRACKS + 1;
    private boolean sharedTrackNamed;
    private final AtomicLong dropped = new AtomicLong();
    private final int pid;
    /** The page being filled, and where it goes in the file. */
    private final byte[] page = new byte[PAGE];
    private int pageUsed;
    private long pageAt;
    private boolean first = true;
    private volatile boolean closed;

    private record Event(String tensor, String name, long startNanos, long endNanos, boolean instant, String transport) {
    }

    public ChromeTraceTimeline(Path path, int rank) {
        try {
            Path parent = path.toAbsolutePath().getParent();
            if (parent != null) {
                java.nio.file.Files.createDirectories(parent);
            }
            this.file = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING);
            page[0] = '[';
            page[1] = '\n';
            pageUsed = 2;
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
        offer(new Event(tensor, phase, startNanos, endNanos, false, null));
    }

    @Override
    public void span(String tensor, String phase, long startNanos, long endNanos, String transport) {
        offer(new Event(tensor, phase, startNanos, endNanos, false, transport));
    }

    @Override
    public void instant(String tensor, String what, long atNanos) {
        offer(new Event(tensor, what, atNanos, atNanos, true, null));
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
        StringBuilder out = new StringBuilder(1024);
        while (true) {
            boolean last = closed;
            queue.drainTo(batch);
            if (!batch.isEmpty()) {
                for (Event e : batch) {
                    out.setLength(0);
                    format(e, out);
                    add(out);
                }
                batch.clear();
                flushPage();
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
        boolean shared = false;
        if (tid == null && tracks.size() < MAX_TRACKS) {
            tid = tracks.size() + 1;
            tracks.put(e.tensor, tid);
            out.append(",\n").append(metadata("thread_name", tid, e.tensor));
        } else if (tid == null) {
            tid = SHARED_TRACK;
            shared = true;
            if (!sharedTrackNamed) {
                sharedTrackNamed = true;
                out.append(",\n").append(metadata("thread_name", tid, "tensors after the first " + MAX_TRACKS));
            }
        }
        out.append(",\n{\"name\":\"").append(escape(e.name)).append("\",\"ph\":\"").append(e.instant ? "i" : "X")
                .append("\",\"pid\":").append(pid).append(",\"tid\":").append(tid).append(",\"ts\":");
        micros(originEpochNanos + (e.startNanos - originNanos), out);
        if (e.instant) {
            out.append(",\"s\":\"t\"");
        } else {
            out.append(",\"dur\":");
            micros(e.endNanos - e.startNanos, out);
        }
        if (e.transport != null || shared) {
            out.append(",\"args\":{");
            if (shared) {
                out.append("\"tensor\":\"").append(escape(e.tensor)).append('"').append(e.transport != null ? "," : "");
            }
            if (e.transport != null) {
                out.append("\"transport\":\"").append(escape(e.transport)).append('"');
            }
            out.append('}');
        }
        out.append('}');
    }

    /** Nanoseconds as microseconds with three decimals, without String.format's cost. */
    private static long epochNanos() {
        java.time.Instant now = java.time.Instant.now();
        return now.getEpochSecond() * 1_000_000_000L + now.getNano();
    }

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

    /** @return how many tensors have a track of their own (for tests) */
    int trackCount() {
        return tracks.size();
    }

    private String metadata(String kind, int tid, String name) {
        return "{\"name\":\"" + kind + "\",\"ph\":\"M\",\"pid\":" + pid + (tid >= 0 ? ",\"tid\":" + tid : "")
                + ",\"args\":{\"name\":\"" + escape(name) + "\"}}";
    }

    /**
     * Adds events (each starting with ",\n", the first one's separator dropped) to the page being filled; a page
     * that is full is written and the next one begun, so that no event spans two pages.
     */
    private synchronized void add(CharSequence events) {
        CharSequence body = first ? events.subSequence(2, events.length()) : events;
        first = false;
        byte[] bytes = body.toString().getBytes(StandardCharsets.UTF_8);
        if (pageUsed + bytes.length > PAGE && pageUsed > 0) {
            flushPage();
            pageAt += PAGE;
            pageUsed = 0;
        }
        int at = 0;
        while (bytes.length - at > PAGE - pageUsed) { // an event larger than a page: the one case that spans pages
            int n = PAGE - pageUsed;
            System.arraycopy(bytes, at, page, pageUsed, n);
            pageUsed = PAGE;
            flushPage();
            pageAt += PAGE;
            pageUsed = 0;
            at += n;
        }
        System.arraycopy(bytes, at, page, pageUsed, bytes.length - at);
        pageUsed += bytes.length - at;
    }

    /** Writes the page being filled, padded with spaces to a whole page, in one positioned write. */
    private synchronized void flushPage() {
        java.util.Arrays.fill(page, pageUsed, PAGE, (byte) ' ');
        write(ByteBuffer.wrap(page), pageAt);
    }

    private void write(ByteBuffer b, long at) {
        try {
            while (b.hasRemaining()) {
                at += file.write(b, at);
            }
        } catch (IOException e) {
            if (!closed) {
                LOG.warn("timeline write failed, disabling it: {}", e.toString());
            }
            closed = true;
        }
    }

    /** For the metadata event at start-up (on the caller's thread, before any other event). */
    private void write(CharSequence events) {
        add(events);
        flushPage();
    }

    /** @return {@code s} escaped for the inside of a JSON string (by Jackson, which Vert.x brings) */
    static String escape(String s) {
        return new String(com.fasterxml.jackson.core.io.JsonStringEncoder.getInstance().quoteAsString(s));
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
            synchronized (this) {
                byte[] end = "\n]\n".getBytes(StandardCharsets.UTF_8);
                ByteBuffer last = ByteBuffer.allocate(pageUsed + end.length).put(page, 0, pageUsed).put(end).flip();
                write(last, pageAt);
                file.truncate(pageAt + pageUsed + end.length);
            }
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
