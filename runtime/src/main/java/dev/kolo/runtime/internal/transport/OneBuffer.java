package dev.kolo.runtime.internal.transport;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.GatheringByteChannel;
import java.nio.channels.ScatteringByteChannel;

/**
 * A wire's single-buffer read and write over its scattering and gathering ones, through one reused slot: the frames
 * call them per frame, so no array is made per call. Used by one thread at a time, as a wire is.
 */
public final class OneBuffer {
    private final ByteBuffer[] slot = new ByteBuffer[1];

    /** @return what {@code channel.read(dst)} would: the bytes read, or -1 at the end of the stream */
    public int read(ScatteringByteChannel channel, ByteBuffer dst) throws IOException {
        slot[0] = dst;
        try {
            return (int) channel.read(slot, 0, 1);
        } finally {
            slot[0] = null;
        }
    }

    /** @return what {@code channel.write(src)} would: the bytes written */
    public int write(GatheringByteChannel channel, ByteBuffer src) throws IOException {
        slot[0] = src;
        try {
            return (int) channel.write(slot, 0, 1);
        } finally {
            slot[0] = null;
        }
    }
}
