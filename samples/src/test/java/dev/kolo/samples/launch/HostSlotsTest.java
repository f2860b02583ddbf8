package dev.kolo.samples.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Hosts and slots from -H and hostfiles, ranks filled in order, and the mistakes named. */
class HostSlotsTest {
    @Test
    void ranksFillTheHostsInOrder() {
        List<HostSlots.Host> hosts = HostSlots.parse("h1:2,10.0.0.2,[fd00::3]:1");
        assertEquals(List.of(new HostSlots.Host("h1", 2), new HostSlots.Host("10.0.0.2", 1),
                new HostSlots.Host("fd00::3", 1)), hosts);
        assertEquals(List.of(new HostSlots.Placement(0, "h1", 0), new HostSlots.Placement(1, "h1", 1),
                new HostSlots.Placement(2, "10.0.0.2", 0)), HostSlots.place(hosts, 3));
    }

    @Test
    void loopbackHostsOrNoneRunHereWithoutSsh() {
        assertEquals(List.of(new HostSlots.Placement(0, null, 0), new HostSlots.Placement(1, null, 1)),
                HostSlots.place(HostSlots.parse("localhost:4"), 2));
        assertEquals(2, HostSlots.place(List.of(), 2).size());
    }

    @Test
    void hostfilesTakeBothSlotNotations(@TempDir Path tmp) throws Exception {
        Path f = tmp.resolve("hosts");
        Files.writeString(f, "# the job's machines\nnode-a slots=4\n\nnode-b:2   # second\nnode-c\n");
        assertEquals(List.of(new HostSlots.Host("node-a", 4), new HostSlots.Host("node-b", 2),
                new HostSlots.Host("node-c", 1)), HostSlots.read(f));
    }

    @Test
    void mistakesAreNamedWithTheirFix(@TempDir Path tmp) throws Exception {
        assertMessage("needs 5 slots, the hosts give 3", () -> HostSlots.place(HostSlots.parse("a:2,b"), 5));
        assertMessage("names a twice", () -> HostSlots.parse("a:2,b,a"));
        assertMessage("slots of a must be 1 to 4096 (got 0)", () -> HostSlots.parse("a:0"));
        assertMessage("comma-separated list", () -> HostSlots.parse("a:2,,b"));
        assertMessage("mixes localhost with other hosts", () -> HostSlots.place(HostSlots.parse("localhost,b"), 2));
        Path f = tmp.resolve("hosts");
        Files.writeString(f, "a slots=2\nb slots two\n");
        assertMessage("line 2: expected 'host', 'host slots=N' or 'host:N'", () -> HostSlots.read(f));
        Files.writeString(f, "# nothing\n");
        assertMessage("names no host", () -> HostSlots.read(f));
    }

    @Test
    void aHostThatSshWouldTakeForAnOptionIsRefused(@TempDir Path tmp) throws Exception {
        assertMessage("host '-oProxyCommand=x' begins with '-', which ssh would take as an option",
                () -> HostSlots.parse("a,-oProxyCommand=x"));
        assertMessage("host '-F/tmp/cfg' begins with '-'", () -> HostSlots.parse("-F/tmp/cfg:2"));
        Path f = tmp.resolve("hosts");
        Files.writeString(f, "a slots=2\n-oProxyCommand=x slots=1\n");
        assertMessage("host '-oProxyCommand=x' begins with '-'", () -> HostSlots.read(f));
    }

    private static void assertMessage(String part, Runnable r) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, r::run);
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }
}
