package dev.kolo.checkpoint.internal;

import dev.kolo.checkpoint.CheckpointId;
import dev.kolo.checkpoint.CheckpointStore;
import dev.kolo.checkpoint.internal.store.FileSync;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** Keeps the newest K committed checkpoints of a store and deletes the rest. */
public final class Retention {
    private Retention() {
    }

    /**
     * Deletes all but the newest {@code keep} checkpoints; never the one just written, even when it is
     * older than others (after a fall back to an older checkpoint).
     *
     * @return one line per checkpoint that could not be deleted
     */
    public static List<String> apply(CheckpointStore store, int keep, CheckpointId justWritten) {
        List<String> warnings = new ArrayList<>();
        List<CheckpointId> ids;
        try {
            ids = store.list();
        } catch (IOException e) {
            warnings.add("retention: cannot list " + store.describe() + ": " + FileSync.reason(e));
            return warnings;
        }
        for (int i = keep; i < ids.size(); i++) {
            CheckpointId id = ids.get(i);
            if (id.equals(justWritten)) {
                continue;
            }
            try {
                store.delete(id);
            } catch (IOException | RuntimeException e) {
                warnings.add("retention: cannot delete " + id + " from " + store.describe() + ": "
                        + FileSync.reason(e));
            }
        }
        return warnings;
    }
}
