package dev.kolo.runtime.internal.engine.drive;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kolo.runtime.Settings;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** How long a rank's waits poll before they park: KOLO_POLL_TIME where each rank has a core, at most 1 ms where not. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class PollTimeTest {
    private static final long DEFAULT = Settings.POLL_TIME.defaultValue().toNanos();

    @Test
    void ranksWithACoreEachPollForTheSettingsTime() {
        assertEquals(Duration.ofMillis(30).toNanos(), DEFAULT, "the default a user gets");
        assertEquals(DEFAULT, Engine.pollNanos(DEFAULT, 2, 2));
        assertEquals(DEFAULT, Engine.pollNanos(DEFAULT, 1, 8), "spare cores");
        assertEquals(0, Engine.pollNanos(0, 2, 2), "0 parks at once");
    }

    @Test
    void ranksThatOutnumberTheCoresPollAtMostAMillisecond() {
        assertEquals(Engine.SHARED_CORES_POLL_NANOS, Engine.pollNanos(DEFAULT, 4, 2));
        assertEquals(Duration.ofMillis(1).toNanos(), Engine.SHARED_CORES_POLL_NANOS);
        assertEquals(200_000, Engine.pollNanos(200_000, 3, 2), "a shorter setting holds there too");
    }
}
