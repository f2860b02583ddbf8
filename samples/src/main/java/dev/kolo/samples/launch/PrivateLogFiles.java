package dev.kolo.samples.launch;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The per-rank log files of {@code --log-dir}: a worker's output may hold what only the job's owner should read,
 * so a new directory is 0700 and every file 0600 whatever the umask; and a file is opened without following a
 * symbolic link, so that a link planted in a shared directory cannot make the launcher truncate another file.
 */
final class PrivateLogFiles {
    private static final Set<PosixFilePermission> OWNER_RW = PosixFilePermissions.fromString("rw-------");
    private static final FileAttribute<Set<PosixFilePermission>> DIR_0700 =
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------"));

    private PrivateLogFiles() {
    }

    /** Creates {@code dir} (and missing parents) as 0700 if it does not exist; an existing one is kept as is. */
    static void createDirectory(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            Files.createDirectories(dir, DIR_0700);
        }
    }

    /**
     * Opens {@code file} for writing from its start: created 0600, or truncated (and made 0600) if it is a
     * regular file already.
     *
     * @throws IOException naming the file and the fix when it is a symbolic link
     */
    static BufferedWriter open(Path file) throws IOException {
        try {
            var channel = Files.newByteChannel(file, Set.of(StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING, LinkOption.NOFOLLOW_LINKS),
                    PosixFilePermissions.asFileAttribute(OWNER_RW));
            try {
                // An existing file keeps its old mode on truncation: make it private too (not through a link
                // swapped in meanwhile).
                Files.getFileAttributeView(file, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                        .setPermissions(OWNER_RW);
            } catch (IOException e) {
                channel.close();
                throw e;
            }
            return new BufferedWriter(new OutputStreamWriter(Channels.newOutputStream(channel),
                    StandardCharsets.UTF_8));
        } catch (IOException e) {
            // The JDK reports O_NOFOLLOW's ELOOP as a plain IOException, without the file: name the link.
            if (Files.isSymbolicLink(file)) {
                throw new IOException(file + " is a symbolic link (to " + Files.readSymbolicLink(file) + "), which "
                        + "--log-dir does not follow: remove it, or give --log-dir a directory of your own", e);
            }
            throw e;
        }
    }
}
