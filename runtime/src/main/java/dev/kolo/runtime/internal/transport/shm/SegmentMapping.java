package dev.kolo.runtime.internal.transport.shm;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A segment's pages mapped into this process, unmapped by {@link #unmap} at once on every supported JDK: the JDK
 * itself would unmap a {@code MappedByteBuffer} only when the garbage collector finds it, holding the memory of
 * every generation's segments (in tmpfs, counted against a pod's {@code /dev/shm} and memory) until then. From JDK 22
 * the file is mapped into a shared {@code java.lang.foreign.Arena}, whose close unmaps (a later access throws, it
 * cannot crash); before, through {@code sun.misc.Unsafe.invokeCleaner}, as Agrona and Netty do (from JDK 24 that
 * call prints a deprecation warning, hence the arena there). Both are reached by reflection, so that the bytecode
 * stays Java 17's.
 */
final class SegmentMapping {
    private static final Logger LOG = LoggerFactory.getLogger(SegmentMapping.class);
    /** The first JDK whose foreign memory API is final (JEP 454). */
    static final int FIRST_JDK_WITH_ARENAS = 22;

    /** The pages, little-endian. */
    final ByteBuffer buffer;
    /** The arena that holds the mapping (JDK 22 on), or null. */
    private final Object arena;
    private boolean unmapped;

    private SegmentMapping(ByteBuffer buffer, Object arena) {
        this.buffer = buffer.order(ByteOrder.LITTLE_ENDIAN);
        this.arena = arena;
    }

    /** Maps {@code size} bytes of {@code ch} from its start, read and write. */
    static SegmentMapping map(FileChannel ch, long size) throws IOException {
        if (ARENAS == null) {
            return new SegmentMapping(ch.map(FileChannel.MapMode.READ_WRITE, 0, size), null);
        }
        Object arena = ARENAS.newArena();
        try {
            Object segment = ARENAS.map.invoke(ch, FileChannel.MapMode.READ_WRITE, 0L, size, arena);
            return new SegmentMapping((ByteBuffer) ARENAS.asByteBuffer.invoke(segment), arena);
        } catch (InvocationTargetException e) {
            ARENAS.closeArena(arena);
            if (e.getCause() instanceof IOException io) {
                throw io;
            }
            throw new IOException("cannot map the shared-memory segment: " + e.getCause(), e.getCause());
        } catch (ReflectiveOperationException | RuntimeException e) {
            ARENAS.closeArena(arena);
            throw new IOException("cannot map the shared-memory segment: " + e, e);
        }
    }

    /** Unmaps the pages now. Only once no thread reads or writes them. Idempotent. */
    synchronized void unmap() {
        if (unmapped) {
            return;
        }
        unmapped = true;
        if (arena != null) {
            ARENAS.closeArena(arena);
        } else if (INVOKE_CLEANER != null) {
            try {
                INVOKE_CLEANER.invoke(UNSAFE, buffer);
            } catch (ReflectiveOperationException | RuntimeException e) {
                LOG.debug("data plane: a shared-memory segment is left for the garbage collector to unmap: {}",
                        e.toString());
            }
        }
    }

    /** @return whether this JVM unmaps at once (always on a supported JDK; for tests) */
    static boolean unmapsAtOnce() {
        return ARENAS != null || INVOKE_CLEANER != null;
    }

    /** The foreign memory API's calls this class makes, found once (null before JDK 22). */
    private record Arenas(Method ofShared, Method map, Method asByteBuffer, Method close) {
        Object newArena() throws IOException {
            try {
                return ofShared.invoke(null);
            } catch (ReflectiveOperationException e) {
                throw new IOException("cannot make an arena for a shared-memory segment: " + e, e);
            }
        }

        void closeArena(Object arena) {
            try {
                close.invoke(arena);
            } catch (ReflectiveOperationException | RuntimeException e) {
                LOG.warn("data plane: could not unmap a shared-memory segment: {}", e.toString());
            }
        }
    }

    private static final Arenas ARENAS;
    private static final Object UNSAFE;
    private static final Method INVOKE_CLEANER;

    static {
        Arenas arenas = null;
        Object unsafe = null;
        Method invoke = null;
        try {
            if (Runtime.version().feature() >= FIRST_JDK_WITH_ARENAS) {
                Class<?> arena = Class.forName("java.lang.foreign.Arena");
                arenas = new Arenas(arena.getMethod("ofShared"),
                        FileChannel.class.getMethod("map", FileChannel.MapMode.class, long.class, long.class, arena),
                        Class.forName("java.lang.foreign.MemorySegment").getMethod("asByteBuffer"),
                        arena.getMethod("close"));
            } else {
                Class<?> c = Class.forName("sun.misc.Unsafe");
                Field f = c.getDeclaredField("theUnsafe");
                f.setAccessible(true);
                unsafe = f.get(null);
                invoke = c.getMethod("invokeCleaner", ByteBuffer.class);
            }
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.debug("data plane: shared-memory segments are unmapped by the garbage collector here: {}", e.toString());
        }
        ARENAS = arenas;
        UNSAFE = unsafe;
        INVOKE_CLEANER = invoke;
    }
}
