package dev.kolo.runtime.internal.transport.connect;

import dev.kolo.kernels.Kernels;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.internal.transport.shm.PeerCopy;
import java.time.Duration;
import java.util.Objects;
import javax.net.ssl.SSLContext;

/** Tuning and deadlines of the data plane. Immutable; {@link #defaults()} suits production. */
public final class TransportOptions {
    private final Duration progressTimeout;
    private final Duration connectTimeout;
    private final int chunkBytes;
    private final int socketBufferBytes;
    private final byte[] authenticationKey;
    private final SSLContext tls;
    private final boolean sharedMemory;
    private final int sharedMemoryBytes;
    private final java.nio.file.Path sharedMemoryDir;
    private final PeerCopy peerCopy;

    private TransportOptions(Builder b) {
        this.sharedMemory = b.sharedMemory;
        this.sharedMemoryBytes = b.sharedMemoryBytes;
        this.sharedMemoryDir = b.sharedMemoryDir;
        this.peerCopy = b.peerCopy;
        this.tls = b.tls;
        this.authenticationKey = b.authenticationKey;
        this.progressTimeout = b.progressTimeout;
        this.connectTimeout = b.connectTimeout;
        this.chunkBytes = b.chunkBytes;
        this.socketBufferBytes = b.socketBufferBytes;
    }

    /**
     * @return progress timeout 30 s, connect timeout 30 s, 512 KiB chunks, OS-tuned socket buffers, shared memory
     *         between ranks of one host with rings of {@link #DEFAULT_SHARED_MEMORY_BYTES}
     */
    public static TransportOptions defaults() {
        return builder().build();
    }

    /** @return a builder starting from the defaults */
    public static Builder builder() {
        return new Builder();
    }

    /** @return longest time an op may go without moving a byte before it fails with WorkerLostException */
    public Duration progressTimeout() {
        return progressTimeout;
    }

    /** @return how long forming a ring (or the alltoall mesh) may take, connect retries included */
    public Duration connectTimeout() {
        return connectTimeout;
    }

    /** @return pipeline chunk size in bytes */
    public int chunkBytes() {
        return chunkBytes;
    }

    /** @return SO_SNDBUF/SO_RCVBUF to request, or 0 to leave the kernel's autotuning alone */
    public int socketBufferBytes() {
        return socketBufferBytes;
    }


    /** @return a copy of the key that authenticates data connections, or null when they are not authenticated */
    public byte[] authenticationKey() {
        return authenticationKey == null ? null : authenticationKey.clone();
    }

    /**
     * @return the TLS context of data connections (this worker's certificate and key, the job's CA), or null
     *         when they are not encrypted
     */
    public SSLContext tls() {
        return tls;
    }

    /** @return whether ranks of one host move their bytes through shared memory */
    public boolean sharedMemory() {
        return sharedMemory;
    }

    /** @return each direction's ring between two co-located ranks, in bytes */
    public int sharedMemoryBytes() {
        return sharedMemoryBytes;
    }

    /** @return how a rank copies bytes into the shared-memory rings it writes */
    public PeerCopy peerCopy() {
        return peerCopy;
    }

    /** @return where shared-memory segments are made (a tmpfs) */
    public java.nio.file.Path sharedMemoryDir() {
        return sharedMemoryDir;
    }

    /** Each direction's ring between two co-located ranks, unless set otherwise. */
    public static final int DEFAULT_SHARED_MEMORY_BYTES = 1 << 20;
    /** The tmpfs every Linux host and container has. */
    public static final java.nio.file.Path DEFAULT_SHARED_MEMORY_DIR = java.nio.file.Path.of("/dev/shm");

    /** Builder of {@link TransportOptions}. */
    public static final class Builder {
        private Duration progressTimeout = Duration.ofSeconds(30);
        private Duration connectTimeout = Duration.ofSeconds(30);
        private int chunkBytes = 512 * 1024;
        private int socketBufferBytes = 0;
        private byte[] authenticationKey;
        private SSLContext tls;
        private boolean sharedMemory = true;
        private int sharedMemoryBytes = DEFAULT_SHARED_MEMORY_BYTES;
        private java.nio.file.Path sharedMemoryDir = DEFAULT_SHARED_MEMORY_DIR;
        private PeerCopy peerCopy = new PeerCopy(Kernels.get(), PeerCopy.Mode.of(Settings.SHM_STREAM.defaultValue()),
                Settings.SHM_STREAM_BYTES.defaultValue());

        private Builder() {
        }

        /**
         * @param on whether ranks of one host move their bytes through shared memory (the connection they
         *        authenticated on stays as doorbell and watch); off, or where a segment cannot be made or mapped, they
         *        use TCP
         * @return this
         */
        public Builder sharedMemory(boolean on) {
            this.sharedMemory = on;
            return this;
        }

        /**
         * @param bytes each direction's ring between two co-located ranks: a power of two from
         *        {@link dev.kolo.runtime.internal.transport.shm.SharedRing#MIN_CAPACITY} to
         *        {@link dev.kolo.runtime.internal.transport.shm.SharedRing#MAX_CAPACITY}
         * @return this
         */
        public Builder sharedMemoryBytes(int bytes) {
            if (Integer.bitCount(bytes) != 1 || bytes < dev.kolo.runtime.internal.transport.shm.SharedRing.MIN_CAPACITY
                    || bytes > dev.kolo.runtime.internal.transport.shm.SharedRing.MAX_CAPACITY) {
                throw new IllegalArgumentException("sharedMemoryBytes must be a power of two from "
                        + dev.kolo.runtime.internal.transport.shm.SharedRing.MIN_CAPACITY + " to "
                        + dev.kolo.runtime.internal.transport.shm.SharedRing.MAX_CAPACITY + ": " + bytes);
            }
            this.sharedMemoryBytes = bytes;
            return this;
        }

        /** @param copy how a rank copies bytes into the shared-memory rings it writes @return this */
        public Builder peerCopy(PeerCopy copy) {
            this.peerCopy = Objects.requireNonNull(copy, "peerCopy");
            return this;
        }

        /** @param dir where segments are made (a tmpfs, {@code /dev/shm} by default) @return this */
        public Builder sharedMemoryDir(java.nio.file.Path dir) {
            this.sharedMemoryDir = Objects.requireNonNull(dir, "sharedMemoryDir");
            return this;
        }

        /**
         * @param context TLS context holding this worker's certificate and key and trusting the job's CA, or null:
         *        every data connection then runs TLS 1.3 with both certificates checked against that CA (no host
         *        names: workers are addressed by IP); peers without TLS, or with certificates of another CA, are
         *        refused
         * @return this
         */
        public Builder tls(SSLContext context) {
            this.tls = context;
            return this;
        }

        /**
         * @param key the job's data-plane key (derived from its secret, at least 16 bytes), or null: every data
         *        connection then proves knowledge of it both ways before it is used; peers without it are refused
         * @return this
         */
        public Builder authenticationKey(byte[] key) {
            if (key != null && key.length < 16) {
                throw new IllegalArgumentException("authenticationKey must have at least 16 bytes: " + key.length);
            }
            this.authenticationKey = key == null ? null : key.clone();
            return this;
        }

        /** @param t no-progress deadline of an op (positive) @return this */
        public Builder progressTimeout(Duration t) {
            this.progressTimeout = positive(t, "progressTimeout");
            return this;
        }

        /** @param t deadline for forming a ring (positive) @return this */
        public Builder connectTimeout(Duration t) {
            this.connectTimeout = positive(t, "connectTimeout");
            return this;
        }

        /** @param bytes pipeline chunk size, 4 KiB to 64 MiB @return this */
        public Builder chunkBytes(int bytes) {
            if (bytes < 4096 || bytes > (64 << 20)) {
                throw new IllegalArgumentException("chunkBytes must be within [4096, 64 MiB]: " + bytes);
            }
            this.chunkBytes = bytes;
            return this;
        }

        /** @param bytes socket buffer size to request, 0 for kernel autotuning @return this */
        public Builder socketBufferBytes(int bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException("socketBufferBytes must be >= 0: " + bytes);
            }
            this.socketBufferBytes = bytes;
            return this;
        }


        /** @return the options */
        public TransportOptions build() {
            return new TransportOptions(this);
        }

        private static Duration positive(Duration d, String what) {
            Objects.requireNonNull(d, what);
            if (d.isNegative() || d.isZero()) {
                throw new IllegalArgumentException(what + " must be positive: " + d);
            }
            return d;
        }
    }
}
