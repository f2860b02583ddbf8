package dev.kolo.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.testing.ChildJvms;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Workers started and closed many times in one JVM, as a user's test suite does: nothing outlives
 * {@link Kolo#close()} (threads, file descriptors, direct memory return to their level after the first
 * rounds), and a close right after the job formed logs nothing at WARN or ERROR.
 */
class LifecycleTest {
    private static final int ROUNDS = 8;
    private static final Pattern ROUND = Pattern.compile(
            "round=(\\d+) threads=(\\d+) fds=(\\d+) direct=(\\d+) names=(.*)");

    @Test
    @Timeout(300)
    void roundsOfInitAllreduceCloseLeaveNothingBehindAndLogNoWarnings() throws Exception {
        try (ChildJvms child = new ChildJvms()) {
            child.start(LifecycleRounds.class, jvmFlags(), Map.of(), Integer.toString(ROUNDS),
                    Integer.toString(LocalJob.freshPortRange()));
            int exit = child.waitExit(0, 280);
            String out = String.join("\n", child.lines);
            assertEquals(0, exit, out);

            List<long[]> rounds = new ArrayList<>();
            List<String> names = new ArrayList<>();
            List<String> loud = new ArrayList<>();
            boolean formed = false;
            for (String tagged : child.lines) {
                String line = tagged.substring(tagged.indexOf(']') + 2);
                Matcher m = ROUND.matcher(line);
                if (line.startsWith("formed round=")) {
                    formed = true;
                } else if (m.matches()) {
                    formed = false;
                    rounds.add(new long[] {Long.parseLong(m.group(2)), Long.parseLong(m.group(3)),
                            Long.parseLong(m.group(4))});
                    names.add(m.group(5));
                } else if (formed && (line.contains(" WARN ") || line.contains(" ERROR ") || line.startsWith("\tat "))) {
                    // From the job's forming to the end of its close. (Members that join at the same instant may
                    // log Hazelcast's start-up migration races before that: not part of closing.)
                    loud.add(line);
                }
            }
            assertEquals(ROUNDS, rounds.size(), out);
            assertEquals(List.of(), loud, "a close right after the job formed logs nothing a user must read");
            String table = child.lines.stream().filter(l -> l.contains(" threads=")).map(l -> l.replaceAll(" names=.*", ""))
                    .reduce((a, b) -> a + "\n" + b).orElse("");
            // The level is the most any of the first half of the rounds reached (the JVM creates pools lazily). A
            // leak grows round after round, so every round of the second half exceeds that level and the last
            // exceeds the second half's first; a descriptor or thread still closing shows in some rounds only, and
            // a pool that grows once and keeps its memory stops growing. (Each round collects until the direct
            // memory reading holds still, so its figure is what is held: buffers still to be freed came to 4 MB,
            // more than a small leak adds in a round.)
            for (int k = 0; k < 3; k++) {
                String what = new String[] {"live threads", "open file descriptors", "direct memory bytes"}[k];
                long level = 0;
                for (int r = 0; r < ROUNDS / 2; r++) {
                    level = Math.max(level, rounds.get(r)[k]);
                }
                long later = Long.MAX_VALUE;
                for (int r = ROUNDS / 2; r < ROUNDS; r++) {
                    later = Math.min(later, rounds.get(r)[k]);
                }
                boolean stillGrowing = rounds.get(ROUNDS - 1)[k] > rounds.get(ROUNDS / 2)[k];
                assertTrue(later <= level || !stillGrowing, what + " grew from " + level + " to " + later + ":\n" + table + "\n"
                        + names.get(ROUNDS / 2 - 1) + "\n" + names.get(ROUNDS - 1));
            }
        }
    }

    /** The heap, and the module access Hazelcast asks for (README, "Using Kolo from Java"). */
    private static List<String> jvmFlags() {
        List<String> flags = new ArrayList<>(List.of("-Xmx256m"));
        List<String> own = java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments();
        for (int i = 0; i < own.size(); i++) {
            String a = own.get(i);
            if (a.startsWith("--add-")) {
                flags.add(a);
                if (!a.contains("=") && i + 1 < own.size()) {
                    flags.add(own.get(++i));
                }
            }
        }
        return flags;
    }
}
