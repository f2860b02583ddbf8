package dev.kolo.runtime.internal.transport.shm;

import dev.kolo.runtime.internal.transport.SharedMemoryWire;
import dev.kolo.runtime.internal.transport.SharedRing;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
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
 * <p>The creator makes the file under a fresh random name, readable and writable by its user alone (0600), writes its
 * pages in full (so a full {@code /dev/shm} is an error now, not a crash at the first write through the mapping) and
 * puts a random token in the header. The name and the token travel to the peer only over the authenticated data
 * connection; the peer maps the file, checks the token (proving both see the same file system) and removes the name
 * at once, so the segment lives on in the two mappings alone and nothing is left behind when either process ends.
 */
public final class SharedSegment implements AutoCloseable {
    /** Every segment's file name starts with this. */
    public static final String PREFIX = "kolo-";
    static final long MAGIC = 0x314D48534F4C4F4BL; // "KOLOSHM1", little-endian
    static final int VERSION = 2;
    static final int HEADER_BYTES = 64;
    public static final int TOKEN_BYTES = 16;
    private static final int MAGIC_AT = 0;
    private static final int VERSION_AT = 8;
    private static final int CAPACITY_AT = 12;
    private static final int TOKEN_AT = 16;
    private static final int PID_AT = 32;
    /** How many zero bytes each write puts when the creator allocates the pages. */
    private static final int FILL_BYTES = 1 << 20;
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path file;
    private final MappedByteBuffer mapping;
    private final int capacity;
    private final byte[] token;
    private boolean closed;

    private SharedSegment(Path file, MappedByteBuffer mapping, int capacity, byte[] token) {
        this.file = file;
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
     * Creates, fills and maps a new segment in {@code dir} named {@code jobPrefix(job) + "g" + generation + "-" + pid
     * + "-" + random}.
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
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
        } catch (FileAlreadyExistsException e) {
            throw new IOException("a shared-memory segment named " + file + " exists already", e);
        }
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer zeros = ByteBuffer.allocateDirect((int) Math.min(FILL_BYTES, size));
            for (long at = 0; at < size; ) {
                zeros.clear().limit((int) Math.min(zeros.capacity(), size - at));
                at += ch.write(zeros, at);
            }
            MappedByteBuffer m = ch.map(FileChannel.MapMode.READ_WRITE, 0, size);
            m.order(ByteOrder.LITTLE_ENDIAN);
            m.putInt(VERSION_AT, VERSION).putInt(CAPACITY_AT, capacity).putLong(PID_AT, pid);
            m.put(TOKEN_AT, token);
            m.putLong(MAGIC_AT, MAGIC);
            return new SharedSegment(file, m, capacity, token);
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(file);
            throw e;
        }
    }

    /**
     * Maps the segment another rank created, checks it and removes its name.
     *
     * @param name the file name the creator sent
     * @throws IOException when it cannot be opened here (another host's file system, gone) or is not the segment the
     *         creator described (size, magic, version, capacity, token)
     */
    public static SharedSegment open(Path dir, String name, int capacity, byte[] token) throws IOException {
        if (!name.startsWith(PREFIX) || name.contains("/") || name.contains("\0") || name.equals("..")) {
            throw new IOException("'" + name + "' is not the name of a Kolo shared-memory segment");
        }
        Path file = dir.resolve(name);
        long size = size(capacity);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            if (ch.size() != size) {
                throw new IOException("shared-memory segment " + file + " holds " + ch.size() + " bytes, expected " + size);
            }
            MappedByteBuffer m = ch.map(FileChannel.MapMode.READ_WRITE, 0, size);
            m.order(ByteOrder.LITTLE_ENDIAN);
            byte[] found = new byte[TOKEN_BYTES];
            m.get(TOKEN_AT, found);
            if (m.getLong(MAGIC_AT) != MAGIC || m.getInt(VERSION_AT) != VERSION || m.getInt(CAPACITY_AT) != capacity
                    || !java.security.MessageDigest.isEqual(found, token)) {
                unmap(m);
                throw new IOException("shared-memory segment " + file + " is not the one its creator described "
                        + "(header or token differ)");
            }
            SharedSegment s = new SharedSegment(file, m, capacity, token);
            s.unlink();
            return s;
        }
    }

    /** @return the file's name (what the creator sends its peer) */
    public String name() {
        return file.getFileName().toString();
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
     */
    public SharedMemoryWire wire(SocketChannel socket, boolean creator) {
        int first = HEADER_BYTES;
        int second = (int) (HEADER_BYTES + SharedRing.footprint(capacity));
        SharedRing ring0 = new SharedRing(mapping, first, capacity, creator);
        SharedRing ring1 = new SharedRing(mapping, second, capacity, !creator);
        return creator ? new SharedMemoryWire(socket, ring1, ring0) : new SharedMemoryWire(socket, ring0, ring1);
    }

    /** Removes the name; the mappings stay. Idempotent. */
    public void unlink() throws IOException {
        Files.deleteIfExists(file);
    }

    /**
     * Removes the name if still there and unmaps the segment. Only once no thread reads or writes its rings (the
     * transport's release sees to it): a later access would crash the process.
     */
    @Override
    public synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        closed = true;
        try {
            unlink();
        } finally {
            unmap(mapping);
        }
    }

    private static final Set<java.nio.file.attribute.PosixFilePermission> OWNER_ONLY =
            PosixFilePermissions.fromString("rw-------");

    /**
     * Unmaps at once (the JDK would wait for the garbage collector, holding the memory of every generation's
     * segments until then), through {@code sun.misc.Unsafe.invokeCleaner}, as Agrona and Netty do; where that is
     * not available, or (JDK 24 on) would print a deprecation warning on the user's terminal, the collector does it:
     * the segment has no name any more, so nothing but its memory waits for it.
     */
    private static void unmap(MappedByteBuffer m) {
        if (INVOKE_CLEANER != null) {
            try {
                INVOKE_CLEANER.invoke(UNSAFE, m);
            } catch (ReflectiveOperationException | RuntimeException ignored) {
                // left to the garbage collector
            }
        }
    }

    /** JEP 498: from JDK 24 the first call of {@code invokeCleaner} prints a warning on standard error. */
    private static final int FIRST_JDK_WARNING_ON_UNSAFE_MEMORY_ACCESS = 24;
    private static final Object UNSAFE;
    private static final Method INVOKE_CLEANER;

    static {
        Object unsafe = null;
        Method invoke = null;
        try {
            if (Runtime.version().feature() >= FIRST_JDK_WARNING_ON_UNSAFE_MEMORY_ACCESS) {
                throw new UnsupportedOperationException("left to the garbage collector");
            }
            Class<?> c = Class.forName("sun.misc.Unsafe");
            Field f = c.getDeclaredField("theUnsafe");
            f.setAccessible(true);
            unsafe = f.get(null);
            invoke = c.getMethod("invokeCleaner", ByteBuffer.class);
        } catch (ReflectiveOperationException | RuntimeException e) {
            unsafe = null;
            invoke = null;
        }
        UNSAFE = unsafe;
        INVOKE_CLEANER = invoke;
    }

    @Override
    public String toString() {
        return "shared-memory segment " + name() + " (" + capacity + " bytes each way)";
    }
}
