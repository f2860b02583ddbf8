package dev.kolo.runtime.internal.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kolo.runtime.internal.transport.SharedMemoryWire;
import dev.kolo.runtime.internal.transport.SharedRing;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A segment's file as another process meets it: its owner alone may open it, its peer must present the token that
 * travelled over the authenticated connection, its name is gone once the peer mapped it, and a creator that died
 * before that leaves nothing the next sweep does not remove.
 */
@Timeout(60)
class SharedSegmentTest {
    private static final int CAPACITY = SharedRing.MIN_CAPACITY;

    @TempDir
    Path dir;

    @Test
    void theFileIsTheOwnersAloneAndAnotherUserCannotOpenIt() throws Exception {
        try (SharedSegment s = SharedSegment.create(dir, "job", 7, CAPACITY)) {
            Path file = dir.resolve(s.name());
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
            assertEquals(SharedSegment.size(CAPACITY), Files.size(file));
            assertTrue(s.name().startsWith(SharedSegment.jobPrefix("job") + "g7-" + ProcessHandle.current().pid() + "-"),
                    s.name());
            // Another user of the host: only as root can this process become one (CI runs as root).
            assumeTrue("root".equals(System.getProperty("user.name")), "needs root to run a process as another user");
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx")); // the directory is not the barrier
            Process p = new ProcessBuilder("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "cat",
                    file.toString()).redirectErrorStream(true).start();
            assertTrue(p.waitFor(20, TimeUnit.SECONDS));
            String out = new String(p.getInputStream().readAllBytes());
            assertNotEquals(0, p.exitValue(), out);
            assertTrue(out.contains("Permission denied"), out);
        }
    }

    @Test
    void thePeerMustPresentTheTokenAndOpeningRemovesTheName() throws Exception {
        try (SharedSegment created = SharedSegment.create(dir, "job", 1, CAPACITY)) {
            byte[] wrong = created.token();
            wrong[0] ^= 1;
            IOException e = assertThrows(IOException.class, () -> SharedSegment.open(dir, created.name(), CAPACITY, wrong));
            assertTrue(e.getMessage().contains("token"), e.getMessage());
            assertThrows(IOException.class, () -> SharedSegment.open(dir, created.name(), 2 * CAPACITY, created.token()));
            assertThrows(IOException.class, () -> SharedSegment.open(dir, "../" + created.name(), CAPACITY, created.token()));
            assertTrue(Files.exists(dir.resolve(created.name())), "a refused open leaves the creator's file");
            try (SharedSegment opened = SharedSegment.open(dir, created.name(), CAPACITY, created.token())) {
                assertFalse(Files.exists(dir.resolve(created.name())), "mapped by both: the name is gone");
                // Bytes written through one mapping arrive through the other.
                try (ServerSocketChannel server = ServerSocketChannel.open().bind(null);
                        SocketChannel a = SocketChannel.open(server.getLocalAddress());
                        SocketChannel b = server.accept()) {
                    SharedMemoryWire creatorSide = created.wire(a, true);
                    SharedMemoryWire openerSide = opened.wire(b, false);
                    ByteBuffer out = ByteBuffer.allocateDirect(100);
                    for (int i = 0; i < 100; i++) {
                        out.put((byte) i);
                    }
                    assertEquals(100, creatorSide.write(out.flip()));
                    assertTrue(openerSide.hasBuffered());
                    ByteBuffer in = ByteBuffer.allocateDirect(100);
                    assertEquals(100, openerSide.read(in));
                    assertEquals(99, in.get(99));
                    assertFalse(openerSide.hasBuffered());
                }
            }
        }
    }

    @Test
    void aDeadCreatorsSegmentIsSweptAndALiveOnesIsKept() throws Exception {
        long dead = deadPid();
        Path stale = Files.createFile(dir.resolve(SharedSegment.jobPrefix("job") + "g3-" + dead + "-0011223344556677"));
        Path reused = Files.createFile(dir.resolve(SharedSegment.jobPrefix("job") + "g3-1-8899aabbccddeeff"));
        Files.setLastModifiedTime(reused, FileTime.from(Instant.parse("2000-01-01T00:00:00Z"))); // before pid 1 started
        Path foreign = Files.createFile(dir.resolve("kolo-not-a-segment"));
        try (SharedSegment live = SharedSegment.create(dir, "job", 3, CAPACITY)) {
            assertEquals(2, StaleSegments.sweep(dir));
            assertFalse(Files.exists(stale), "its creator is dead");
            assertFalse(Files.exists(reused), "its pid belongs to a process started after it was written");
            assertTrue(Files.exists(dir.resolve(live.name())), "its creator is this process");
            assertTrue(Files.exists(foreign), "not a name Kolo makes");
        }
    }

    @Test
    void closingUnmapsAndRemovesTheName() throws Exception {
        SharedSegment s = SharedSegment.create(dir, "job", 1, CAPACITY);
        Path file = dir.resolve(s.name());
        s.close();
        s.close();
        assertFalse(Files.exists(file));
    }

    @Test
    void aDirectoryThatCannotHoldItIsAnErrorNotACrash() {
        Path missing = dir.resolve("no-such-dir");
        assertThrows(IOException.class, () -> SharedSegment.create(missing, "job", 1, CAPACITY));
    }

    /** @return a pid no process has: one of a process that just ended */
    private static long deadPid() throws Exception {
        Process p = new ProcessBuilder("true").start();
        long pid = p.pid();
        p.waitFor();
        for (int i = 0; i < 100 && ProcessHandle.of(pid).isPresent(); i++) {
            Thread.sleep(10);
        }
        return pid;
    }
}
