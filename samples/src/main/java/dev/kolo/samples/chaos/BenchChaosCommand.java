package dev.kolo.samples.chaos;

import dev.kolo.samples.launch.KoloVersion;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code bench chaos}: the fault-injection suite. Each scenario runs the sample training job as separate
 * worker processes, injects one fault (SIGKILL, SIGTERM, SIGSTOP, a crash loop, a crash while checkpointing, a
 * network partition between namespaces, a slow and lossy link),
 * and checks that nothing hangs, all surviving ranks agree on the parameters' checksum after every recovery,
 * and nothing committed is lost. Prints a table (or JSON lines) and exits 1 if any scenario failed.
 */
@Command(name = "chaos", description = "Fault injection: runs the sample job as worker processes, injects one "
        + "fault per scenario, and checks recovery (exit 1 if any scenario fails).",
        mixinStandardHelpOptions = true, versionProvider = KoloVersion.class, sortOptions = false)
public final class BenchChaosCommand implements Callable<Integer> {
    @Option(names = "--scenarios", paramLabel = "A,B,...", split = ",",
            description = "Scenarios to run, in the order given (default: all): kill-during-allreduce, "
                    + "coordinator-killed, sigterm-leave, sigstop-past-deadline, crash-loop, crash-during-checkpoint, "
                    + "partition-3-2, slow-lossy-link (these two need root: network namespaces; else they are "
                    + "skipped).")
    List<String> scenarios;

    @Option(names = "--rounds", paramLabel = "N", defaultValue = "20",
            description = "Kills of kill-during-allreduce (crash-during-checkpoint uses up to 3) (default: "
                    + "${DEFAULT-VALUE}).")
    int rounds;

    @Option(names = "--deadline", paramLabel = "SECONDS",
            description = "Deadline of each scenario (default: per scenario, growing with --rounds); past it the "
                    + "scenario fails as a hang and its processes are killed.")
    Integer deadlineSeconds;

    @Option(names = "--data", paramLabel = "DIR", description = "Fashion-MNIST directory for the workers.")
    Path data;

    @Option(names = "--seed", paramLabel = "S", description = "Seed of the fault timing and victims (default: random).")
    Long seed;

    @Option(names = "--json", description = "One JSON object per scenario: {\"bench\":\"chaos\",\"scenario\":...}.")
    boolean json;

    @Override
    public Integer call() {
        List<ChaosScenarios.Entry> chosen = select(scenarios, rounds);
        if (deadlineSeconds != null && deadlineSeconds < 10) {
            throw new IllegalArgumentException("--deadline must be at least 10 seconds (got " + deadlineSeconds + ")");
        }
        long s = seed != null ? seed : System.nanoTime();
        ChaosScenarios suite = new ChaosScenarios(rounds, data, s);
        ChaosReport report = new ChaosReport();
        if (!json) {
            System.out.println("bench chaos: seed " + s + ", rounds " + rounds);
            System.out.println(ChaosReport.header());
            System.out.flush();
        }
        for (ChaosScenarios.Entry e : chosen) {
            ChaosReport.Result r = runOne(suite, e);
            report.add(r);
            System.out.println(json ? ChaosReport.json(r) : ChaosReport.row(r));
            System.out.flush();
        }
        System.err.println(report.summary());
        return report.allPassed() ? 0 : 1;
    }

    /** The scenarios named (all by default); an unknown name or bad --rounds is a usage error. */
    static List<ChaosScenarios.Entry> select(List<String> names, int rounds) {
        if (rounds < 1) {
            throw new IllegalArgumentException("--rounds must be at least 1 (got " + rounds + ")");
        }
        if (names == null || names.isEmpty()) {
            return List.copyOf(ChaosScenarios.ALL.values());
        }
        List<ChaosScenarios.Entry> out = new ArrayList<>();
        for (String n : names) {
            ChaosScenarios.Entry e = ChaosScenarios.ALL.get(n.trim());
            if (e == null) {
                throw new IllegalArgumentException("unknown scenario '" + n.trim() + "' for --scenarios; known: "
                        + String.join(", ", ChaosScenarios.ALL.keySet()));
            }
            out.add(e);
        }
        return out;
    }

    private ChaosReport.Result runOne(ChaosScenarios suite, ChaosScenarios.Entry e) {
        long seconds = deadlineSeconds != null ? deadlineSeconds : e.deadlineSeconds(rounds);
        long start = System.nanoTime();
        long deadline = start + TimeUnit.SECONDS.toNanos(seconds);
        boolean pass = false;
        String detail;
        try {
            detail = e.body().run(suite, deadline);
            pass = true;
        } catch (ChaosSkipped skip) {
            return ChaosReport.Result.skip(e.name(), (System.nanoTime() - start) / 1e9, skip.getMessage());
        } catch (ChaosFailure f) {
            detail = f.getMessage();
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            detail = "interrupted";
        } catch (Exception ex) {
            detail = "error: " + ex;
        }
        return new ChaosReport.Result(e.name(), pass, (System.nanoTime() - start) / 1e9, detail);
    }
}
