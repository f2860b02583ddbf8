package dev.kolo.samples.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kolo.runtime.Settings;
import org.junit.jupiter.api.Test;

/** The ports launch gives the workers of a host: a base and the next ones, checked to exist, 0 staying 0. */
class HostPortsTest {
    @Test
    void workerIOfAHostTakesTheBasePlusIAndZeroStaysOff() {
        assertEquals(7070, HostPorts.of(7070, 0));
        assertEquals(7073, HostPorts.of(7070, 3));
        assertEquals(0, HostPorts.of(0, 3), "0 means any free port (data) or off (metrics) for every worker");
    }

    @Test
    void aBaseThatLeavesNoPortForTheLastWorkerNamesTheSettingAndTheFix() {
        System.setProperty(Settings.DATA_PORT.property(), "65534");
        try {
            String m = assertThrows(IllegalArgumentException.class,
                    () -> HostPorts.base(Settings.DATA_PORT, 4, "for any free port")).getMessage();
            assertTrue(m.contains("KOLO_DATA_PORT 65534 leaves no port for worker 3 of a host")
                    && m.contains("use at most 65532, or 0 for any free port"), m);
            assertEquals(65534, HostPorts.base(Settings.DATA_PORT, 2, "for any free port"));
        } finally {
            System.clearProperty(Settings.DATA_PORT.property());
        }
    }
}
