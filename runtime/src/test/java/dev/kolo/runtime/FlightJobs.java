package dev.kolo.runtime;

import dev.kolo.testing.ChildJvms;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** Starts a job of {@link FlightLoopWorker} processes whose flight recorders write to one directory. */
final class FlightJobs {
    private FlightJobs() {
    }

    /** @return the job's processes, process i asking for rank i */
    static ChildJvms start(Path dir, int np, Map<String, String> more) throws Exception {
        String job = LocalJob.uniqueName("flight");
        String port = Integer.toString(LocalJob.freshPortRange());
        ChildJvms workers = new ChildJvms();
        try {
            for (int i = 0; i < np; i++) {
                Map<String, String> env = new HashMap<>(Map.of("KOLO_JOB", job, "KOLO_CLUSTER_PORT", port,
                        "KOLO_METRICS_PORT", "0", "KOLO_NP", Integer.toString(np), "KOLO_RANK_HINT", Integer.toString(i),
                        "KOLO_FLIGHT_DIR", dir.toString()));
                env.putAll(more);
                workers.start(FlightLoopWorker.class, List.of("-Xmx256m"), env);
            }
            return workers;
        } catch (Exception | Error e) {
            workers.close();
            throw e;
        }
    }
}
