package dev.kolo.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code worker.jar bench soak -np 2 --minutes 2 --json}: two real worker processes run training-like steps for
 * two minutes; every result is checked and no rank's memory, threads or file descriptors grow beyond the
 * soak's tolerances. The figures are printed for the test report.
 */
@Timeout(value = 8, unit = TimeUnit.MINUTES)
class SoakIT {
    private static final Pattern RESULT = Pattern.compile("\\{\"bench\":\"soak\",\"np\":2,\"rank\":(\\d),"
            + "\"result\":\"(ok|fail)\",\"steps\":(\\d+),.*\"checked_values\":(\\d+),.*");

    @Test
    void twoMinutesOfStepsLeakNothingAndComputeRight() throws Exception {
        try (WorkerProcess soak = WorkerProcess.start("bench", "soak", "-np", "2", "--minutes", "2", "--json")) {
            int code = soak.exitCode(7 * 60);
            List<String> json = soak.lines(l -> l.startsWith("{\"bench\":\"soak\""));
            json.forEach(System.out::println);
            assertEquals(0, code, soak.transcript());
            for (int rank = 0; rank < 2; rank++) {
                String prefix = "{\"bench\":\"soak\",\"np\":2,\"rank\":" + rank + ",";
                assertEquals(1, json.stream().filter(l -> l.startsWith(prefix + "\"phase\":\"start\"")).count(),
                        soak.transcript());
                assertEquals(1, json.stream().filter(l -> l.startsWith(prefix + "\"phase\":\"end\"")).count(),
                        soak.transcript());
                List<String> results = json.stream().filter(l -> l.startsWith(prefix + "\"result\"")).toList();
                assertEquals(1, results.size(), soak.transcript());
                Matcher m = RESULT.matcher(results.get(0));
                assertTrue(m.matches(), results.get(0));
                assertEquals("ok", m.group(2), results.get(0));
                assertTrue(Long.parseLong(m.group(3)) >= 10, "too few steps: " + results.get(0));
                assertTrue(Long.parseLong(m.group(4)) > 0, results.get(0));
            }
            assertTrue(soak.err.stream().anyMatch(l -> l.equals("kolo: soak passed")), soak.transcript());
        }
    }
}
