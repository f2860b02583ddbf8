package dev.kolo.elastic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

/** Assertions the multi-process tests share. */
final class Checks {
    private Checks() {
    }

    /** Every line carries the same value of {@code field}. */
    static String same(List<String> lines, String field, String what) {
        Set<String> values = new HashSet<>();
        lines.forEach(l -> values.add(WorkerProcesses.field(l, field)));
        assertEquals(1, values.size(), what + ": ranks differ in " + field + ":\n" + String.join("\n", lines));
        return values.iterator().next();
    }

    /** The final parameters match an uninterrupted single-process run within a tolerance. */
    static void matchesReference(String doneLine, int dim) {
        matchesReference(doneLine, dim, Long.parseLong(WorkerProcesses.field(doneLine, "steps")));
    }

    static void matchesReference(String doneLine, int dim, long steps) {
        String[] got = WorkerProcesses.field(doneLine, "probe").split(",");
        String[] want = TrainModel.reference(dim, steps).probe().split(",");
        assertEquals(want.length, got.length);
        for (int i = 0; i < got.length; i++) {
            double g = Double.parseDouble(got[i]);
            double w = Double.parseDouble(want[i]);
            assertTrue(Math.abs(g - w) <= 1e-3 * Math.max(1, Math.abs(w)),
                    "parameter probe " + i + ": got " + g + ", an uninterrupted run gives " + w + " (" + doneLine + ")");
        }
    }
}
