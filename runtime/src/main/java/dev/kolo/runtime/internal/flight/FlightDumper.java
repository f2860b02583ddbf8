package dev.kolo.runtime.internal.flight;

import dev.kolo.runtime.WorkerLostException;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a rank's flight recorder to {@code dir/flight-rank-R.json} when it matters: when one of its ops has waited
 * longer than the stall warning (the moment the coordinator reports the stall, seen by every rank itself, so that a
 * rank waiting on another op writes its file too), once per stalled op; when an op fails; when the JVM shuts down
 * while the worker runs (a signal); and on request ({@link #dump}). Its own daemon thread watches once a
 * {@link #PASS_MILLIS}, off the engine's way; a close writes a failure not yet written, then stops it.
 */
public final class FlightDumper implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(FlightDumper.class);
    /** How often the thread looks for a stall or a failure. */
    static final long PASS_MILLIS = 500;

    private final FlightRecorder recorder;
    private final Path dir;
    private final long stallNanos;
    private final int rank;
    private final java.util.function.IntSupplier size;
    private final String job;
    private final String host;
    private final Thread thread;
    private final Thread hook;
    private volatile boolean closed;
    /** The stalled op last written for (the thread's own). */
    private long stallWritten = -1;

    /**
     * Starts the watching thread and the shutdown hook.
     *
     * @param size       the ranks of the job now, which the analyser expects a file of each
     * @param stallNanos how long an op waits before this rank writes its file ({@code KOLO_STALL_WARNING})
     */
    public FlightDumper(FlightRecorder recorder, Path dir, long stallNanos, int rank,
                        java.util.function.IntSupplier size, String job, String host) {
        this.recorder = recorder;
        this.dir = dir;
        this.stallNanos = stallNanos;
        this.rank = rank;
        this.size = size;
        this.job = job;
        this.host = host;
        this.thread = new Thread(this::watch, "kolo-flight-" + rank);
        thread.setDaemon(true);
        this.hook = new Thread(this::onShutdown, "kolo-flight-shutdown-" + rank);
        Runtime.getRuntime().addShutdownHook(hook);
        thread.start();
    }

    /** @return the directory the files go to */
    public Path dir() {
        return dir;
    }

    private void watch() {
        while (!closed) {
            try {
                pass();
            } catch (RuntimeException e) {
                LOG.warn("flight recorder: cannot check for a dump: {}", e.toString());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(PASS_MILLIS));
        }
    }

    private void pass() {
        writeFailure();
        long now = System.nanoTime();
        long stalled = recorder.oldestWaitingBefore(now - stallNanos);
        if (stalled >= 0 && stalled != stallWritten) {
            stallWritten = stalled;
            FlightRecord r = find(stalled);
            write("stall", r == null ? "an op waited longer than the stall warning (KOLO_STALL_WARNING)"
                    : "op " + r.label() + " (" + r.signature() + ") has waited " + seconds(r.waitedUs(
                    FlightClock.now().micros(now))) + " s, longer than the stall warning (KOLO_STALL_WARNING)", true);
        }
    }

    private void writeFailure() {
        long failed = recorder.takeFailure();
        if (failed >= 0) {
            FlightRecord r = find(failed);
            // A peer gone (lost, or closed by its program) is told to this rank's program by the op's exception and,
            // when it was a loss, warned about by the membership: the file's line is for who looks, not a warning.
            boolean peerGone = recorder.error(failed) instanceof WorkerLostException;
            write("failure", r == null ? "an op failed" : "op " + r.label() + " failed: " + r.error(), !peerGone);
        }
    }

    private FlightRecord find(long seq) {
        List<FlightRecord> records = recorder.snapshot(FlightClock.now());
        for (FlightRecord r : records) {
            if (r.seq() == seq) {
                return r;
            }
        }
        return null;
    }

    private static String seconds(long micros) {
        return String.format(java.util.Locale.ROOT, "%.1f", micros / 1e6);
    }

    private void onShutdown() {
        if (!closed) {
            write("signal", "the JVM is shutting down while the worker runs (SIGTERM, Ctrl-C, or an exit without "
                    + "closing Kolo)", true);
        }
    }

    /**
     * Writes this rank's file now.
     *
     * @param trigger stall, failure, signal or request
     * @return the file's JSON (also when the file could not be written: that is logged)
     */
    public byte[] dump(String trigger, String reason) {
        return write(trigger, reason, false);
    }

    /** @param warn whether the line naming the file is a warning (a stall, an op's own failure) or information */
    private byte[] write(String trigger, String reason, boolean warn) {
        FlightClock clock = FlightClock.now();
        byte[] json = new FlightDumpFile(rank, size.getAsInt(), job, host, ProcessHandle.current().pid(), trigger, reason,
                clock.epochMicros(), recorder.capacity(), recorder.recorded(), recorder.snapshot(clock)).toJson();
        try {
            Path file = FlightDumpFile.write(dir, FlightDumpFile.fileName(rank), json);
            String line = "flight recorder ({}): {}; wrote {} (read it with 'java -jar worker.jar flight analyse {}')";
            if (warn) {
                LOG.warn(line, trigger, reason, file, dir);
            } else {
                LOG.info(line, trigger, reason, file, dir);
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn("flight recorder ({}): {}; cannot write {} in {} ({}): set KOLO_FLIGHT_DIR to a directory this "
                    + "worker may write", trigger, reason, FlightDumpFile.fileName(rank), dir, e.toString());
        }
        return json;
    }

    /** Writes a failure not yet written, stops the thread and removes the hook; later failures write nothing. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        writeFailure();
        closed = true;
        LockSupport.unpark(thread);
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // the hook runs, and sees closed
        }
    }
}
