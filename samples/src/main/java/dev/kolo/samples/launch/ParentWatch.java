package dev.kolo.samples.launch;

import java.util.Optional;

/**
 * A worker started by {@code launch} ends itself when the launcher is gone (even if the launcher was
 * killed with SIGKILL and could not stop it), so no worker is ever orphaned.
 */
public final class ParentWatch {
    public static final String LAUNCHER_PID = "KOLO_LAUNCHER_PID";

    private ParentWatch() {
    }

    public static void startIfLaunched() {
        String pid = System.getenv(LAUNCHER_PID);
        if (pid == null || pid.isBlank()) {
            return;
        }
        Optional<ProcessHandle> launcher = ProcessHandle.of(Long.parseLong(pid.trim()));
        if (launcher.isEmpty()) {
            System.err.println("kolo: error: the launcher (pid " + pid + ") is gone; stopping");
            System.exit(1);
        }
        Thread watch = new Thread(() -> {
            launcher.get().onExit().join();
            System.err.println("kolo: error: the launcher (pid " + pid + ") exited; stopping this worker");
            System.exit(1);
        }, "kolo-launcher-watch");
        watch.setDaemon(true);
        watch.start();
    }
}
