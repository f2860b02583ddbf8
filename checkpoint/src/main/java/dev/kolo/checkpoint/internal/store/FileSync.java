package dev.kolo.checkpoint.internal.store;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** fsync and delete helpers for the local directory store, and the one-line text of an I/O error. */
public final class FileSync {
    private FileSync() {
    }

    /**
     * Makes the directory's entries (creations, renames, deletions) durable: opens the directory and
     * fsyncs it, as POSIX requires after a rename.
     */
    public static void forceDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (IOException e) {
            throw new IOException("cannot fsync directory " + dir + ": " + e.getMessage(), e);
        }
    }

    /** Writes {@code bytes} to a new file and fsyncs it. */
    static void writeDurably(Path file, byte[] bytes) throws IOException {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(bytes);
            while (b.hasRemaining()) {
                ch.write(b);
            }
            ch.force(true);
        } catch (IOException e) {
            throw new IOException("cannot write " + file + ": " + reason(e), e);
        }
    }

    /** Deletes a file or a directory tree; missing entries are fine. Symbolic links are not followed. */
    public static void deleteRecursively(Path p) throws IOException {
        if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
            try (DirectoryStream<Path> s = Files.newDirectoryStream(p)) {
                for (Path child : s) {
                    deleteRecursively(child);
                }
            } catch (NoSuchFileException e) {
                return;
            }
        }
        Files.deleteIfExists(p);
    }

    /** @return the most useful text of an I/O error ({@code No space left on device}, ...) */
    public static String reason(Throwable e) {
        String m = e.getMessage();
        if (e instanceof java.nio.file.FileSystemException fse && fse.getReason() != null) {
            m = fse.getReason();
        }
        return m == null ? e.getClass().getSimpleName() : m;
    }
}
