package dev.kolo.runtime.internal.transport.shm;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kolo.kernels.Kernels;
import dev.kolo.testing.ChildJvms;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A segment's file as another process meets it: it has no name in the directory from the moment it is made, so a
 * creator killed at any later moment leaves nothing there; its owner alone may open it (another user cannot, not
 * even through the creator's descriptor), its peer must present the token that travelled over the authenticated
 * connection, closing unmaps it at once on every JDK installed here, and what an older version left is swept.
 */
@Timeout(120)
class SharedSegmentTest {
    private static final int CAPACITY = SharedRing.MIN_CAPACITY;

    @TempDir
    Path dir;

    @Test
    void theFileIsTheOwnersAloneAndAnotherUserCannotOpenIt() throws Exception {
        try (SharedSegment s = SharedSegment.create(dir, "job", 7, CAPACITY)) {
            Path held = descriptorPath(s);
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(held)));
            assertEquals(SharedSegment.size(CAPACITY), Files.size(held));
            assertTrue(s.name().startsWith(SharedSegment.jobPrefix("job") + "g7-" + ProcessHandle.current().pid() + "-"),
                    s.name());
            // Another user of the host (nobody), through the path the peer opens.
            Process p = new ProcessBuilder(asNobody("cat", held.toString())).redirectErrorStream(true).start();
            assertTrue(p.waitFor(20, TimeUnit.SECONDS));
            String out = new String(p.getInputStream().readAllBytes());
            assertNotEquals(0, p.exitValue(), out);
            assertTrue(out.contains("Permission denied"), out);
        }
    }

    @Test
    void theNameIsGoneFromTheStartAndThePeerMustPresentTheToken() throws Exception {
        try (SharedSegment created = SharedSegment.create(dir, "job", 1, CAPACITY)) {
            assertEquals(List.of(), names(), "the segment has no name once created");
            byte[] wrong = created.token();
            wrong[0] ^= 1;
            IOException e = assertThrows(IOException.class,
                    () -> SharedSegment.open(dir, created.reference(), CAPACITY, wrong));
            assertTrue(e.getMessage().contains("token"), e.getMessage());
            assertThrows(IOException.class, () -> SharedSegment.open(dir, created.reference(), 2 * CAPACITY,
                    created.token()));
            assertThrows(IOException.class, () -> SharedSegment.open(dir, "../" + created.reference(), CAPACITY,
                    created.token()));
            assertThrows(IOException.class, () -> SharedSegment.open(dir, created.name(), CAPACITY, created.token()));
            IOException other = assertThrows(IOException.class, () -> SharedSegment.open(dir, created.name() + ":0",
                    CAPACITY, created.token()));
            assertTrue(other.getMessage().contains("not the segment"), other.getMessage());
            try (SharedSegment opened = SharedSegment.open(dir, created.reference(), CAPACITY, created.token())) {
                // Bytes written through one mapping arrive through the other.
                try (ServerSocketChannel server = ServerSocketChannel.open().bind(null);
                        SocketChannel a = SocketChannel.open(server.getLocalAddress());
                        SocketChannel b = server.accept()) {
                    PeerCopy streamed = new PeerCopy(Kernels.get(), PeerCopy.Mode.ALWAYS, 64); // the 100 bytes go past the cache
                    SharedMemoryWire creatorSide = created.wire(a, true, streamed);
                    SharedMemoryWire openerSide = opened.wire(b, false, streamed);
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

    /** The reported defect: a segment made and not yet mapped by its peer stayed named when its creator died. */
    @Test
    void aCreatorKilledWhileItsSegmentsWaitForThePeerLeavesNothing() throws Exception {
        try (ChildJvms jvm = new ChildJvms()) {
            jvm.start(SegmentProbe.class, List.of("-Xmx64m"), Map.of(), "hold", dir.toString());
            jvm.await(0, 60, "the child's segments", l -> l.contains("held 3"));
            jvm.process(0).destroyForcibly(); // SIGKILL
            assertTrue(jvm.process(0).waitFor(30, TimeUnit.SECONDS));
        }
        assertEquals(List.of(), names(), "a killed creator left segments");
    }

    /** The reported defect: on JDK 24 and later closing left the mapping to the garbage collector. */
    @Test
    void closingUnmapsAtOnceOnEveryJdkInstalledHere() throws Exception {
        List<Path> javas = supportedJdks();
        for (Path java : javas) {
            try (ChildJvms jvm = new ChildJvms()) {
                List<String> cmd = new ArrayList<>(List.of(java.toString(), "-Xmx64m", "-cp",
                        System.getProperty("java.class.path"), SegmentProbe.class.getName(), "close", dir.toString()));
                jvm.start(cmd, Map.of());
                assertEquals(0, jvm.waitExit(0, 60), java + ":\n" + jvm.tail(20));
                assertTrue(jvm.lines.stream().anyMatch(l -> l.contains("mapped while open, unmapped after close")),
                        java + ":\n" + jvm.tail(20));
                assertTrue(jvm.lines.stream().noneMatch(l -> l.contains("WARNING")), java + " warned:\n" + jvm.tail(20));
                System.out.println(java + ": " + jvm.lines); // which JDKs ran, in the test's report
            }
        }
        assertTrue(javas.stream().anyMatch(j -> j.startsWith(System.getProperty("java.home"))), "this JVM: " + javas);
    }

    @Test
    void whatADeadCreatorLeftIsSweptAndOtherFilesAreKept() throws Exception {
        long dead = deadPid();
        Path stale = Files.createFile(dir.resolve(SharedSegment.jobPrefix("job") + "g3-" + dead + "-0011223344556677"));
        Path reused = Files.createFile(dir.resolve(SharedSegment.jobPrefix("job") + "g3-1-8899aabbccddeeff"));
        Files.setLastModifiedTime(reused, FileTime.from(Instant.parse("2000-01-01T00:00:00Z"))); // before pid 1 started
        Path live = Files.createFile(dir.resolve(SharedSegment.jobPrefix("job") + "g3-"
                + ProcessHandle.current().pid() + "-0123456789abcdef"));
        Path foreign = Files.createFile(dir.resolve("kolo-not-a-segment"));
        assertEquals(2, StaleSegments.sweep(dir));
        assertFalse(Files.exists(stale), "its creator is dead");
        assertFalse(Files.exists(reused), "its pid belongs to a process started after it was written");
        assertTrue(Files.exists(live), "its creator is this process");
        assertTrue(Files.exists(foreign), "not a name Kolo makes");
    }

    @Test
    void aDirectoryThatCannotHoldItIsAnErrorNotACrash() {
        Path missing = dir.resolve("no-such-dir");
        assertThrows(IOException.class, () -> SharedSegment.create(missing, "job", 1, CAPACITY));
    }

    private List<String> names() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith(SharedSegment.PREFIX)).toList();
        }
    }

    private static Path descriptorPath(SharedSegment s) {
        String ref = s.reference();
        return Path.of("/proc", Long.toString(ProcessHandle.current().pid()), "fd",
                ref.substring(ref.lastIndexOf(':') + 1));
    }

    /**
     * The command as user nobody (65534): {@code setpriv} directly as root, else through password-less sudo. Neither
     * available fails the test, naming what it needs: the check must run, not be skipped.
     */
    static List<String> asNobody(String... command) throws Exception {
        List<String> setpriv = new ArrayList<>(List.of("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"));
        setpriv.addAll(List.of(command));
        if ("root".equals(System.getProperty("user.name"))) {
            return setpriv;
        }
        try {
            Process sudo = new ProcessBuilder("sudo", "-n", "true").redirectErrorStream(true).start();
            if (sudo.waitFor(20, TimeUnit.SECONDS) && sudo.exitValue() == 0) {
                setpriv.add(0, "-n");
                setpriv.add(0, "sudo");
                return setpriv;
            }
        } catch (IOException noSudo) {
            // said below
        }
        fail("checking that another user cannot open a segment needs to run a process as another user: run the tests "
                + "as root (as CI does) or with password-less sudo, with setpriv (util-linux) installed");
        return null;
    }

    /** @return the {@code java} of this JVM and of every other JDK 17, 21 or 25 under /usr/lib/jvm */
    private static List<Path> supportedJdks() throws IOException {
        List<Path> javas = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")));
        Path jvms = Path.of("/usr/lib/jvm");
        if (Files.isDirectory(jvms)) {
            try (Stream<Path> homes = Files.list(jvms)) {
                for (Path home : homes.sorted().toList()) {
                    Path java = home.resolve("bin/java");
                    String release = Files.exists(home.resolve("release")) ? Files.readString(home.resolve("release"))
                            : "";
                    boolean supported = release.matches("(?s).*JAVA_VERSION=\"(17|21|25)[.\"].*");
                    if (supported && Files.isExecutable(java) && javas.stream().noneMatch(j -> sameFile(j, java))) {
                        javas.add(java);
                    }
                }
            }
        }
        return javas;
    }

    private static boolean sameFile(Path a, Path b) {
        try {
            return a.toRealPath().equals(b.toRealPath());
        } catch (IOException e) {
            return false;
        }
    }

    /** @return a pid no process has: one of a process that just ended */
    private static long deadPid() throws Exception {
        Process p = new ProcessBuilder("true").start();
        long pid = p.pid();
        p.waitFor();
        for (int i = 0; i < 100 && ProcessHandle.of(pid).isPresent(); i++) {
            Thread.sleep(10); // polling a condition, bounded by the count
        }
        return pid;
    }
}
