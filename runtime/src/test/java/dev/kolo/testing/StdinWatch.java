package dev.kolo.testing;

/** For worker processes a test starts: the test closes the process's standard input to stop it. */
public final class StdinWatch {
    private StdinWatch() {
    }

    /** Exits this process once standard input closes (the parent test is done or gone). */
    public static void exitWhenClosed() {
        Thread watch = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // nothing is sent; only the end matters
                }
            } catch (java.io.IOException ignored) {
                // parent gone
            }
            System.exit(0);
        }, "stdin-watch");
        watch.setDaemon(true);
        watch.start();
    }
}
