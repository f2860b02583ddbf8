package dev.kolo.runtime.internal.transport.shm;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Set;

/**
 * One shared-memory segment between two ranks of a host, for one generation: a header, then a {@link SharedRing} from
 * its creator to the other rank and one back.
 *
 * <pre>
 *   +0   magic "KOLOSHM1" (8), version (4), ring capacity (4), token (16), creator pid (8)   (64 bytes)
 *   +64  ring 0: creator writes, opener reads
 *   ...  ring 1: opener writes, creator reads
 * </pre>
 *
 * <p>The creator makes the file under a fresh random name, readable and writable by its user alone (0600), and
 * removes the name in the same call that creates it ({@code DELETE_ON_CLOSE} unlinks right after the open, before
 * the call returns): from then on the file lives in the creator's descriptor and the mappings alone, so a kill of
 * either process at any later moment leaves nothing in the directory. It writes the pages in full (a full
 * {@code /dev/shm} is an error now, not a crash at the first write through the mapping) and puts a random token in
 * the header. Its {@link #reference} (the name, and the descriptor that holds the file) and the token travel to
 * the peer only over the authenticated data connection; the peer opens the file through the creator's descriptor
 * ({@code /proc/<pid>/fd/<n>}: the workers of a host share a pid namespace, as for {@link StaleSegments}), maps it
 * and checks the token. Closing unmaps at once on every supported JDK ({@link SegmentMapping}).
 */
public final class SharedSegment implements AutoCloseable {
    /** Every segment's file name starts with this. */
    public static final String PREFIX = "kolo-";
    static final long MAGIC = 0x314D48534F4C4F4BL; // "KOLOSHM1", little-endian
    static final int VERSION = 4;
    static final int HEADER_BYTES = 64;
    public static final int TOKEN_BYTES = 16;
    private static final int MAGIC_AT = 0;
    private static final int VERSION_AT = 8;
    private static final int CAPACITY_AT = 12;
    private static final int TOKEN_AT = 16;
    private static final int PID_AT = 32;
    /** How many zero bytes each write puts when the creator allocates the pages. */
    private static final int FILL_BYTES = 1 << 20;
    /** What the kernel appends to the target of a descriptor's link once the file has no name. */
    private static final String DELETED = " (deleted)";
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path file;
    /** The creator's descriptor of the unnamed file, which the peer opens it through; null on the peer's side. */
    private final FileChannel channel;
    private final int descriptor;
    private final SegmentMapping mapping;
    private final int capacity;
    private final byte[] token;
    private boolean closed;

    private SharedSegment(Path file, FileChannel channel, int descriptor, SegmentMapping mapping, int capacity,
                          byte[] token) {
        this.file = file;
        this.channel = channel;
        this.descriptor = descriptor;
        this.mapping = mapping;
        this.capacity = capacity;
        this.token = token;
    }

    /** @return the bytes a segment of two rings of {@code capacity} takes */
    public static long size(int capacity) {
        return HEADER_BYTES + 2 * SharedRing.footprint(capacity);
    }

    /**
     * The start of the names of a job's segments: {@link #PREFIX}, then 8 hex digits of the job name's SHA-256 (a
     * job name may hold any character; a file name may not).
     */
    public static String jobPrefix(String job) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(job.getBytes(StandardCharsets.UTF_8));
            return PREFIX + HexFormat.of().formatHex(h, 0, 4) + "-";
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }

    /**
     * Creates a new segment in {@code dir}, named {@code jobPrefix(job) + "g" + generation + "-" + pid + "-" +
     * random} for the moment of its creation only, and fills and maps it.
     *
     * @throws IOException when the file cannot be made or filled (no such directory, no room left in it)
     */
    public static SharedSegment create(Path dir, String job, long generation, int capacity) throws IOException {
        byte[] token = new byte[TOKEN_BYTES];
        RANDOM.nextBytes(token);
        byte[] nonce = new byte[8];
        RANDOM.nextBytes(nonce);
        long pid = ProcessHandle.current().pid();
        Path file = dir.resolve(jobPrefix(job) + "g" + generation + "-" + pid + "-" + HexFormat.of().formatHex(nonce));
        long size = size(capacity);
        FileChannel ch;
        try {
            ch = FileChannel.open(file, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                    StandardOpenOption.WRITE, StandardOpenOption.DELETE_ON_CLOSE),
                    PosixFilePermissions.asFileAttribute(OWNER_ONLY));
        } catch (FileAlreadyExistsException e) {
            throw new IOException("a shared-memory segment named " + file + " exists already", e);
        }
        SegmentMapping m = null;
        try {
            int fd = descriptorOf(file);
            ByteBuffer zeros = ByteBuffer.allocateDirect((int) Math.min(FILL_BYTES, size));
            for (long at = 0; at < size; ) {
                zeros.clear().limit((int) Math.min(zeros.capacity(), size - at));
                at += ch.write(zeros, at);
            }
            m = SegmentMapping.map(ch, size);
            ByteBuffer b = m.buffer;
            b.putInt(VERSION_AT, VERSION).putInt(CAPACITY_AT, capacity).putLong(PID_AT, pid);
            b.put(TOKEN_AT, token);
            b.putLong(MAGIC_AT, MAGIC);
            return new SharedSegment(file, ch, fd, m, capacity, token);
        } catch (IOException | RuntimeException e) {
            if (m != null) {
                m.unmap();
            }
            ch.close();
            throw e;
        }
    }

    /** @return this process's descriptor of the file that was {@code file} (its name is gone: the link says so) */
    private static int descriptorOf(Path file) throws IOException {
        String target = file.toString() + DELETED;
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
            for (Path fd : fds) {
                try {
                    if (Files.readSymbolicLink(fd).toString().equals(target)) {
                        return Integer.parseInt(fd.getFileName().toString());
                    }
                } catch (IOException | NumberFormatException gone) {
                    // closed meanwhile, or the directory's own descriptor
                }
            }
        }
        throw new IOException("no descriptor of " + file + " in /proc/self/fd: shared memory needs Linux's /proc");
    }

    /**
     * Maps the segment another rank created (through its descriptor) and checks it.
     *
     * @param reference what the creator sent: {@link #reference}
     * @throws IOException when it cannot be opened here (another host, another pid namespace, gone) or is not the
     *         segment the creator described (its name, size, magic, version, capacity, token)
     */
    public static SharedSegment open(Path dir, String reference, int capacity, byte[] token) throws IOException {
        int colon = reference.lastIndexOf(':');
        String name = colon < 0 ? reference : reference.substring(0, colon);
        long pid = StaleSegments.creatorPid(name);
        int fd = -1;
        try {
            fd = colon < 0 ? -1 : Integer.parseInt(reference.substring(colon + 1));
        } catch (NumberFormatException e) {
            // refused below
        }
        if (!name.startsWith(PREFIX) || name.contains("/") || name.contains("\0") || pid <= 0 || fd < 0) {
            throw new IOException("'" + reference + "' is not the reference of a Kolo shared-memory segment");
        }
        Path file = dir.resolve(name);
        Path link = Path.of("/proc", Long.toString(pid), "fd", Integer.toString(fd));
        String target;
        try {
            target = Files.readSymbolicLink(link).toString();
        } catch (IOException e) {
            throw new IOException("cannot see process " + pid + "'s descriptor " + fd + " (" + e + "): its creator must "
                    + "run on this host, in this pid namespace", e);
        }
        if (!target.equals(file + DELETED)) {
            throw new IOException("process " + pid + "'s descriptor " + fd + " is " + target + ", not the segment "
                    + file + " its creator described");
        }
        long size = size(capacity);
        try (FileChannel ch = FileChannel.open(link, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (ch.size() != size) {
                throw new IOException("shared-memory segment " + file + " holds " + ch.size() + " bytes, expected " + size);
            }
            SegmentMapping m = SegmentMapping.map(ch, size);
            try {
                ByteBuffer b = m.buffer;
                byte[] found = new byte[TOKEN_BYTES];
                b.get(TOKEN_AT, found);
                if (b.getLong(MAGIC_AT) != MAGIC || b.getInt(VERSION_AT) != VERSION || b.getInt(CAPACITY_AT) != capacity
                        || !java.security.MessageDigest.isEqual(found, token)) {
                    throw new IOException("shared-memory segment " + file + " is not the one its creator described "
                            + "(header or token differ)");
                }
                return new SharedSegment(file, null, -1, m, capacity, token);
            } catch (IOException | RuntimeException e) {
                m.unmap(); // nothing mapped outlives a refusal
                throw e;
            }
        }
    }

    /** @return the file's name while it had one (for messages) */
    public String name() {
        return file.getFileName().toString();
    }

    /** @return what the creator sends its peer: the name, then ':' and the descriptor that holds the file */
    public String reference() {
        return name() + ":" + descriptor;
    }

    /** @return the random token the creator put in the header */
    public byte[] token() {
        return token.clone();
    }

    /** @return each ring's capacity */
    public int capacity() {
        return capacity;
    }

    /**
     * The stream between the two ranks over this segment.
     *
     * @param socket the authenticated data connection between them: doorbell and watch
     * @param creator whether this rank created the segment (it writes ring 0)
     * @param copy how this rank copies bytes into the ring it writes
     */
    public SharedMemoryWire wire(SocketChannel socket, boolean creator, PeerCopy copy) {
        int first = HEADER_BYTES;
        int second = (int) (HEADER_BYTES + SharedRing.footprint(capacity));
        SharedRing ring0 = new SharedRing(mapping.buffer, first, capacity, creator, copy);
        SharedRing ring1 = new SharedRing(mapping.buffer, second, capacity, !creator, copy);
        return creator ? new SharedMemoryWire(socket, ring1, ring0) : new SharedMemoryWire(socket, ring0, ring1);
    }

    /**
     * Unmaps the segment and closes the creator's descriptor: the memory is freed once the peer has done the same.
     * Only once no thread reads or writes its rings (the transport's release sees to it). Idempotent.
     */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            mapping.unmap();
        } finally {
            if (channel != null) {
                channel.close();
            }
        }
    }

    private static final Set<java.nio.file.attribute.PosixFilePermission> OWNER_ONLY =
            PosixFilePermissions.fromString("rw-------");

    @Override
    public String toString() {
        return "shared-memory segment " + name() + " (" + capacity + " bytes each way)";
    }
}
