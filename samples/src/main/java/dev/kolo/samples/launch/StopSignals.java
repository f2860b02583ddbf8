package dev.kolo.samples.launch;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import sun.misc.Signal;
import sun.misc.SignalHandler;

/**
 * The launcher's handling of SIGINT (Ctrl-C) and SIGTERM: the first one is recorded and starts the stop of every
 * worker, so the launcher can report the stop as asked for, print its last line whole and exit with the
 * conventional status (128 + the signal's number). The JDK has no public API for signals; {@code sun.misc.Signal}
 * (module jdk.unsupported) is the supported way on every JDK this runs on.
 */
final class StopSignals implements AutoCloseable {
    private static final List<String> NAMES = List.of("INT", "TERM");

    private final AtomicReference<Signal> received = new AtomicReference<>();
    private final List<Signal> installed = new ArrayList<>();
    private final List<SignalHandler> previous = new ArrayList<>();

    /** @param onFirst run once, on a thread of its own, when the first of the signals arrives */
    StopSignals(Runnable onFirst) {
        SignalHandler handler = signal -> {
            if (received.compareAndSet(null, signal)) {
                Thread stop = new Thread(onFirst, "kolo-launch-stop-" + signal.getName());
                stop.setDaemon(true);
                stop.start();
            }
        };
        for (String name : NAMES) {
            Signal s = new Signal(name);
            previous.add(Signal.handle(s, handler));
            installed.add(s);
        }
    }

    /** @return {@code SIGINT} or {@code SIGTERM} once one arrived, else null */
    String received() {
        Signal s = received.get();
        return s == null ? null : "SIG" + s.getName();
    }

    /** @return the status a process stopped by the signal received exits with (130 for SIGINT, 143 for SIGTERM) */
    int exitStatus() {
        return 128 + received.get().getNumber();
    }

    @Override
    public void close() {
        for (int i = 0; i < installed.size(); i++) {
            Signal.handle(installed.get(i), previous.get(i));
        }
    }
}
