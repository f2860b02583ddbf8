package dev.kolo.checkpoint;

import dev.kolo.checkpoint.internal.format.Crc;
import dev.kolo.checkpoint.internal.format.DataHeader;
import dev.kolo.checkpoint.internal.format.Manifest;
import dev.kolo.checkpoint.internal.format.ManifestCodec;
import dev.kolo.checkpoint.internal.format.TensorEntry;
import dev.kolo.runtime.Tensor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.WritableByteChannel;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.zip.CRC32C;

/**
 * One checkpoint ready to be stored: its data file's bytes (a 64-byte header, then every tensor at a
 * 64-byte aligned offset) and its manifest. A {@link CheckpointStore} writes the data with
 * {@link #writeData(WritableByteChannel)} and then stores {@link #manifestBytes()}; the checksums the
 * manifest carries are computed while the data is written the first time.
 *
 * <p>An image reads the bytes it was made from (the staging buffer of an asynchronous save, or the
 * caller's tensors in a synchronous one) each time its data is written; it copies nothing itself. Not
 * thread-safe: one store writes it at a time.
 */
public final class CheckpointImage {
    private static final int CHUNK = 1 << 20;
    private static final ByteBuffer ZEROS = ByteBuffer.allocateDirect(Manifest.ALIGNMENT);

    private final Manifest layout;
    private final List<ByteBuffer> sources;
    private final int[] crcs;
    private boolean checksummed;
    private byte[] manifest;

    private CheckpointImage(Manifest layout, List<ByteBuffer> sources) {
        this.layout = layout;
        this.sources = sources;
        this.crcs = new int[sources.size()];
    }

    /**
     * @param sources for each tensor of {@code state} in order, a buffer holding exactly its bytes
     *     (position 0, limit = byte size)
     */
    static CheckpointImage of(CheckpointState state, String job, List<ByteBuffer> sources) {
        List<TensorEntry> entries = new ArrayList<>(state.tensors().size());
        long offset = Manifest.HEADER_BYTES;
        long end = Manifest.HEADER_BYTES;
        int i = 0;
        for (Map.Entry<String, Tensor> e : state.tensors().entrySet()) {
            Tensor t = e.getValue();
            offset = Manifest.align(end);
            long length = t.byteSize();
            if (sources.get(i).remaining() != length) {
                throw new IllegalStateException("source of " + e.getKey() + " holds " + sources.get(i).remaining()
                        + " bytes, expected " + length);
            }
            entries.add(new TensorEntry(e.getKey(), t.dtype(), t.shape(), offset, length, 0));
            end = offset + length;
            i++;
        }
        Manifest m = new Manifest(Manifest.FORMAT_VERSION, state.id(), UUID.randomUUID(), job, state.epoch(),
                state.worldSize(), Instant.now().truncatedTo(ChronoUnit.MILLIS), end, state.scalars(), state.metadataJson(), List.copyOf(entries));
        List<ByteBuffer> views = new ArrayList<>(sources.size());
        for (ByteBuffer s : sources) {
            views.add(s.asReadOnlyBuffer().order(ByteOrder.LITTLE_ENDIAN));
        }
        return new CheckpointImage(m, views);
    }

    /** Image that reads the caller's tensors in place (for a synchronous save). */
    static CheckpointImage ofTensors(CheckpointState state, String job) {
        List<ByteBuffer> sources = new ArrayList<>();
        for (Tensor t : state.tensors().values()) {
            sources.add(t.buffer());
        }
        return of(state, job, sources);
    }

    /** @return the checkpoint's id */
    public CheckpointId id() {
        return layout.id();
    }

    /** @return the size of the data file in bytes */
    public long dataSize() {
        return layout.dataBytes();
    }

    /** @return the number of tensors */
    public int tensorCount() {
        return sources.size();
    }

    /** @return the job name recorded in the manifest */
    public String job() {
        return layout.job();
    }

    /**
     * Writes the whole data file, from byte 0 to {@link #dataSize()}, to {@code out}, computing the
     * tensors' checksums on the first complete pass.
     */
    public void writeData(WritableByteChannel out) throws IOException {
        boolean computing = !checksummed;
        writeFully(out, DataHeader.encode(layout));
        long pos = Manifest.HEADER_BYTES;
        CRC32C crc = new CRC32C();
        for (int i = 0; i < sources.size(); i++) {
            TensorEntry e = layout.tensors().get(i);
            int pad = (int) (e.offset() - pos);
            if (pad > 0) {
                writeFully(out, ZEROS.duplicate().limit(pad));
            }
            ByteBuffer src = sources.get(i).duplicate();
            crc.reset();
            while (src.hasRemaining()) {
                ByteBuffer chunk = src.duplicate().limit(Math.min(src.limit(), src.position() + CHUNK));
                src.position(chunk.limit());
                if (computing) {
                    crc.update(chunk.duplicate());
                }
                writeFully(out, chunk);
            }
            if (computing) {
                crcs[i] = (int) crc.getValue();
            }
            pos = e.offset() + e.length();
        }
        if (computing) {
            checksummed = true;
        }
    }

    /** @return the manifest file's bytes (UTF-8 JSON); computes the checksums if no write has yet */
    public byte[] manifestBytes() {
        if (manifest == null) {
            if (!checksummed) {
                for (int i = 0; i < sources.size(); i++) {
                    crcs[i] = Crc.of(sources.get(i));
                }
                checksummed = true;
            }
            manifest = ManifestCodec.encode(manifestWithChecksums());
        }
        return manifest.clone();
    }

    Manifest manifestWithChecksums() {
        List<TensorEntry> entries = new ArrayList<>(crcs.length);
        for (int i = 0; i < crcs.length; i++) {
            entries.add(layout.tensors().get(i).withCrc(crcs[i]));
        }
        return new Manifest(layout.formatVersion(), layout.id(), layout.uuid(), layout.job(), layout.epoch(),
                layout.worldSize(), layout.createdAt(), layout.dataBytes(), layout.scalars(), layout.metadataJson(),
                List.copyOf(entries));
    }

    private static void writeFully(WritableByteChannel out, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            out.write(b);
        }
    }

    @Override
    public String toString() {
        return "CheckpointImage[" + layout.id() + ", " + sources.size() + " tensors, " + layout.dataBytes() + " bytes]";
    }
}
