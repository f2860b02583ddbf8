package dev.kolo.runtime.internal.transport.shm;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Removes segment names whose creator is dead: a segment has a name only between the two system calls that create
 * and unlink its file ({@link SharedSegment#create}), so only a kill at that instant, or an older Kolo version,
 * leaves one. A segment's name carries its creator's pid; the creator is dead when no process has that pid, or the
 * process that has it started after the segment was written (the pid was reused). Run whenever a generation
 * connects co-located ranks, so what a crash left is gone by the next generation.
 *
 * <p>Only processes of this pid namespace are seen: workers that share {@code /dev/shm} share their pid namespace
 * too (several workers of one container, as {@code launch} and the Kubernetes overlay start them), as the peer's
 * open through {@code /proc/<pid>/fd} needs anyway.
 */
public final class StaleSegments {
    private static final Logger LOG = LoggerFactory.getLogger(StaleSegments.class);

    private StaleSegments() {
    }

    /** @return how many stale segments were removed from {@code dir} */
    public static int sweep(Path dir) {
        int removed = 0;
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, SharedSegment.PREFIX + "*")) {
            for (Path f : files) {
                if (stale(f)) {
                    try {
                        if (Files.deleteIfExists(f)) {
                            removed++;
                            LOG.info("data plane: removed {}, a shared-memory segment whose creator is gone", f);
                        }
                    } catch (IOException e) {
                        LOG.debug("data plane: cannot remove stale segment {}: {}", f, e.toString());
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            LOG.debug("data plane: cannot look for stale shared-memory segments in {}: {}", dir, e.toString());
        }
        return removed;
    }

    /** @return whether the segment's creator is no longer alive */
    static boolean stale(Path file) {
        long pid = creatorPid(file.getFileName().toString());
        if (pid <= 0) {
            return false; // not a name Kolo makes: leave it alone
        }
        Optional<ProcessHandle> p = ProcessHandle.of(pid);
        if (p.isEmpty() || !p.get().isAlive()) {
            return true;
        }
        Optional<Instant> started = p.get().info().startInstant();
        try {
            FileTime written = Files.getLastModifiedTime(file);
            // Start times are known to the jiffy; a second of slack keeps a live creator's segment.
            return started.isPresent() && started.get().isAfter(written.toInstant().plusSeconds(1));
        } catch (IOException e) {
            return false; // gone meanwhile
        }
    }

    /** @return the pid in a name {@code kolo-<job>-g<generation>-<pid>-<random>}, or -1 */
    static long creatorPid(String name) {
        String[] parts = name.split("-");
        if (parts.length != 5 || !parts[0].concat("-").equals(SharedSegment.PREFIX) || !parts[2].startsWith("g")) {
            return -1;
        }
        try {
            return Long.parseLong(parts[3]);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
