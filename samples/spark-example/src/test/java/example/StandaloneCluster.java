package example;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A Spark standalone cluster of separate JVMs on this machine, started from the example's {@code target/lib} as an
 * installation of Spark would be: a master and {@code workers} workers of one core each. Each worker starts its
 * executors as JVMs of their own.
 */
final class StandaloneCluster implements AutoCloseable {
    private final List<Process> processes = new ArrayList<>();
    private final Path dir;
    private final int port;

    StandaloneCluster(Path dir, Path lib, int workers) throws IOException {
        this.dir = dir;
        this.port = freePort();
        // A worker builds its executors' class path from SPARK_HOME/jars: the libraries here but Kolo's own, which
        // the program gives the executors itself.
        Path home = Files.createDirectories(dir.resolve("spark-home"));
        Path jars = Files.createDirectories(home.resolve("jars"));
        try (var files = Files.list(lib)) {
            for (Path jar : files.filter(j -> !j.getFileName().toString().startsWith("kolo-")).toList()) {
                Files.createSymbolicLink(jars.resolve(jar.getFileName()), jar.toAbsolutePath());
            }
        }
        String cp = lib.toAbsolutePath() + "/*";
        Path masterLog = dir.resolve("master.log");
        start(home, masterLog, List.of("java", "-cp", cp, "org.apache.spark.deploy.master.Master",
                "--host", "127.0.0.1", "--port", Integer.toString(port), "--webui-port", "0"));
        awaitLine(masterLog, "I have been elected leader");
        for (int w = 0; w < workers; w++) {
            Path log = dir.resolve("worker-" + w + ".log");
            start(home, log, List.of("java", "-cp", cp, "org.apache.spark.deploy.worker.Worker", "--host",
                    "127.0.0.1", "--cores", "1", "--memory", "2g", "--webui-port", "0", "--work-dir",
                    dir.resolve("work-" + w).toString(), url()));
            awaitLine(log, "Successfully registered with master");
        }
    }

    /** @return the master's URL, {@code spark://127.0.0.1:PORT} */
    String url() {
        return "spark://127.0.0.1:" + port;
    }

    /** @return the folder of the cluster's logs and the workers' work folders (executors' output) */
    Path dir() {
        return dir;
    }

    private void start(Path home, Path log, List<String> command) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("SPARK_HOME", home.toString());
        pb.environment().put("SPARK_SCALA_VERSION", "2.13");
        processes.add(pb.start());
    }

    private void awaitLine(Path log, String text) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (System.nanoTime() < deadline) {
            if (Files.exists(log) && Files.readString(log).contains(text)) {
                return;
            }
            for (Process p : processes) {
                if (!p.isAlive()) {
                    throw new IllegalStateException("a cluster JVM exited (" + p.exitValue() + "); its log: "
                            + log + "\n" + Files.readString(log));
                }
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        }
        throw new IllegalStateException("'" + text + "' not in " + log + " within 90 s:\n" + Files.readString(log));
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    @Override
    public void close() {
        for (int i = processes.size() - 1; i >= 0; i--) {
            processes.get(i).destroy(); // the workers first, then the master
        }
        for (Process p : processes) {
            try {
                if (!p.waitFor(20, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                p.destroyForcibly();
            }
        }
    }
}
