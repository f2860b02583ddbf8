package dev.kolo.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.testing.ChildJvms;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code worker.jar launch -- COMMAND}: a program of the user's own, compiled by the test, as every worker. */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class OwnProgramLaunchIT {
    @TempDir
    static Path tmp;
    static Path classes;

    @BeforeAll
    static void compile() throws Exception {
        classes = OwnProgram.compile(tmp);
    }

    @Test
    void threeRanksOfAProgramOfItsOwnEachGetTheirResult() throws Exception {
        Path logs = tmp.resolve("logs");
        List<String> args = new ArrayList<>(List.of("launch", "-np", "3", "--output-ranks", "0", "--log-dir",
                logs.toString(), "--"));
        args.addAll(OwnProgram.command(classes, "sum"));
        try (WorkerProcess launch = WorkerProcess.start(args.toArray(new String[0]))) {
            assertEquals(0, launch.exitCode(120), launch.transcript());
            assertEquals(List.of("[0] result rank=0 size=3 sum=6 secret=true secret_on_command_line=false host=null"),
                    launch.lines(l -> l.contains("result rank=")), launch.transcript());
            assertTrue(launch.lines(l -> l.startsWith("[1]") || l.startsWith("[2]")).isEmpty(),
                    "--output-ranks 0 shows rank 0 only\n" + launch.transcript());
            for (int r = 0; r < 3; r++) {
                List<String> log = Files.readAllLines(logs.resolve("rank." + r + ".log"));
                assertTrue(log.contains("result rank=" + r + " size=3 sum=6 secret=true secret_on_command_line=false host=null"),
                        "rank " + r + "'s log: " + log);
            }
        }
    }

    /** Two launches at once on one machine, default settings: their workers' metrics ports do not collide. */
    @Test
    void twoLaunchesAtOnceWithDefaultsBothSucceed() throws Exception {
        List<String> args = new ArrayList<>(List.of("launch", "-np", "2", "--"));
        args.addAll(OwnProgram.command(classes, "sum"));
        try (WorkerProcess first = WorkerProcess.start(args.toArray(new String[0]));
             WorkerProcess second = WorkerProcess.start(args.toArray(new String[0]))) {
            assertEquals(0, first.exitCode(120), first.transcript());
            assertEquals(0, second.exitCode(120), second.transcript());
            assertEquals(2, first.lines(l -> l.contains("result rank=") && l.contains("size=2 sum=3")).size(),
                    first.transcript());
            assertEquals(2, second.lines(l -> l.contains("result rank=") && l.contains("size=2 sum=3")).size(),
                    second.transcript());
        }
    }

    @Test
    void startedAloneItIsAJobOfOneAndSaysSoOnce() throws Exception {
        Map<String, String> withoutKoloVariables = new HashMap<>(); // null: removed
        System.getenv().keySet().stream().filter(k -> k.startsWith("KOLO_"))
                .forEach(k -> withoutKoloVariables.put(k, null));
        try (ChildJvms jvms = new ChildJvms()) {
            int p = jvms.start(OwnProgram.command(classes, "sum"), withoutKoloVariables);
            jvms.process(p).getOutputStream().close();
            int exit = jvms.waitExit(p, 60);
            String out = String.join("\n", jvms.output(p));
            assertEquals(0, exit, out);
            assertTrue(out.contains("result rank=0 size=1 sum=1 secret=false"), out);
            assertEquals(1, out.lines().filter(l -> l.contains("this process is a job of one worker")).count(), out);
        }
    }

    @Test
    void noWorkerOutlivesAKilledLauncher() throws Exception {
        List<String> args = new ArrayList<>(List.of("launch", "-np", "2", "--"));
        args.addAll(OwnProgram.command(classes, "steps"));
        try (WorkerProcess launch = WorkerProcess.start(args.toArray(new String[0]))) {
            launch.awaitLine(l -> l.startsWith("[1] step 3 "), 90);
            List<Long> pids = new ArrayList<>();
            for (String l : launch.lines(l -> l.contains("started worker"))) {
                pids.add(Long.parseLong(l.replaceAll(".*\\(pid (\\d+)\\).*", "$1")));
            }
            assertEquals(2, pids.size(), launch.transcript());
            for (long pid : pids) {
                assertTrue(ProcessHandle.of(pid).map(h -> h.info().command().orElse("").endsWith("java"))
                        .orElse(false), "the pid reported is the worker's own (" + pid + ")");
            }
            launch.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS); // SIGKILL: no shutdown hook runs
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (System.nanoTime() < deadline && pids.stream().anyMatch(OwnProgramLaunchIT::alive)) {
                Thread.sleep(100);
            }
            List<Long> left = pids.stream().filter(OwnProgramLaunchIT::alive).toList();
            left.forEach(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
            assertEquals(List.of(), left, "workers left running after their launcher was killed");
        }
    }

    private static boolean alive(long pid) {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }
}
