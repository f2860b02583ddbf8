package dev.kolo.runtime.internal.transport;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.List;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLEngineResult.HandshakeStatus;
import javax.net.ssl.SSLEngineResult.Status;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLHandshakeException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSession;

/**
 * TLS 1.3 over one non-blocking data connection, with one {@link SSLEngine}: both sides present a
 * certificate and check the other's against the job's CA (the acceptor requires a client certificate).
 *
 * <p>Buffers are direct and allocated once per connection, sized from the session's packet size: one
 * record each while the connection is greeted, {@link #BULK_RECORDS} records once it serves a ring
 * ({@link #growForBulk}), so a socket call moves several records. Reads decrypt straight into the caller's
 * buffers; only a record whose plaintext does not fit the room left (TLS 1.3 counts its content-type byte
 * too) is decrypted aside and copied. Nothing here allocates per record (the JDK's engine allocates its
 * small result object per call).
 *
 * <p>Contract kept for the pump loops: a read returns 0 only when every complete record received has been
 * decrypted and delivered (what is left is part of a record), so waiting for the socket is then right; a
 * read never stops early while the caller still has room and decryptable bytes are buffered.
 */
public final class TlsWire implements Wire {
    static final String PROTOCOL = "TLSv1.3";
    /** AES-128-GCM first: the fastest with AES instructions; the others remain for peers that need them. */
    private static final String[] SUITES = {"TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
        "TLS_CHACHA20_POLY1305_SHA256"};
    /** Records per network buffer once the connection carries frames: fewer, larger socket calls. */
    static final int BULK_RECORDS = 8;
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);
    /** TLS record header: content type (1), version (2), length (2). */
    private static final int RECORD_HEADER_BYTES = 5;

    private final SocketChannel ch;
    private final SSLEngine engine;
    private final int packetBytes;
    private ByteBuffer netIn; // read mode: received, not yet decrypted
    private ByteBuffer netOut; // read mode: encrypted, not yet sent
    private ByteBuffer appIn; // read mode: decrypted, not yet delivered
    private final OneBuffer one = new OneBuffer();
    private boolean handshaken;
    private boolean firstWordKnown;
    private int firstWord;

    private TlsWire(SocketChannel ch, SSLEngine engine) {
        this.ch = ch;
        this.engine = engine;
        SSLSession session = engine.getSession();
        this.packetBytes = session.getPacketBufferSize();
        this.netIn = ByteBuffer.allocateDirect(packetBytes).flip();
        this.netOut = ByteBuffer.allocateDirect(packetBytes).flip();
        this.appIn = ByteBuffer.allocateDirect(session.getApplicationBufferSize()).flip();
    }

    /** The connecting side of a data connection; call {@link #handshake()} until it returns true. */
    public static TlsWire client(SocketChannel ch, SSLContext context, String host, int port) throws SSLException {
        SSLEngine e = context.createSSLEngine(host, port);
        configure(e, true);
        e.beginHandshake();
        return new TlsWire(ch, e);
    }

    /** The accepting side; it requires the client's certificate. */
    public static TlsWire server(SocketChannel ch, SSLContext context) throws SSLException {
        SSLEngine e = context.createSSLEngine();
        configure(e, false);
        e.beginHandshake();
        return new TlsWire(ch, e);
    }

    private static void configure(SSLEngine e, boolean client) {
        e.setUseClientMode(client);
        SSLParameters p = e.getSSLParameters();
        p.setProtocols(new String[] {PROTOCOL});
        List<String> supported = List.of(e.getSupportedCipherSuites());
        p.setCipherSuites(Arrays.stream(SUITES).filter(supported::contains).toArray(String[]::new));
        p.setUseCipherSuitesOrder(true);
        // No host name check: workers are addressed by IP (pods) and are identified by the job's CA instead.
        p.setEndpointIdentificationAlgorithm(null);
        if (!client) {
            p.setNeedClientAuth(true);
        }
        e.setSSLParameters(p);
    }

    @Override
    public SocketChannel socket() {
        return ch;
    }

    /** @return true once the handshake has completed (both certificates checked, as far as this side knows) */
    public boolean handshaken() {
        return handshaken;
    }

    /** @return true when the first four bytes the peer sent were {@code word} (e.g. a plaintext Kolo hello) */
    public boolean startedWith(int word) {
        return firstWordKnown && firstWord == word;
    }

    /** @return the negotiated protocol and cipher suite, for logs */
    String describe() {
        SSLSession s = engine.getSession();
        return s.getProtocol() + " " + s.getCipherSuite();
    }

    /**
     * Moves the handshake on with what the socket allows now, never blocking.
     *
     * @return true once it is complete and its last message handed to the socket; false when it waits for
     *         the socket ({@link #handshakeInterest})
     * @throws SSLException when the peer's certificate is refused, the peer refuses ours, or it is no TLS peer
     * @throws EOFException when the peer closes the connection first
     */
    public boolean handshake() throws IOException {
        if (handshaken) {
            return true;
        }
        try {
            while (true) {
                if (netOut.hasRemaining()) {
                    ch.write(netOut);
                    if (netOut.hasRemaining()) {
                        return false;
                    }
                }
                HandshakeStatus hs = engine.getHandshakeStatus();
                switch (hs) {
                    case NEED_WRAP -> wrapHandshake();
                    case NEED_UNWRAP, NEED_UNWRAP_AGAIN -> {
                        if (!unwrapHandshake()) {
                            return false;
                        }
                    }
                    case NEED_TASK -> runTasks();
                    default -> {
                        handshaken = true;
                        return true;
                    }
                }
            }
        } catch (SSLException e) {
            if (peerSpeaksTls()) {
                sendAlert(); // a peer that is no TLS peer gets no alert: the caller may answer it in its own terms
            }
            throw e;
        }
    }

    /** @return true when the peer's first byte was a TLS record type (change_cipher_spec to application_data) */
    private boolean peerSpeaksTls() {
        int type = firstWord >>> 24;
        return !firstWordKnown || (type >= 20 && type <= 23);
    }

    /** @return the selector interest the unfinished handshake waits for */
    public int handshakeInterest() {
        return netOut.hasRemaining() ? SelectionKey.OP_WRITE : SelectionKey.OP_READ;
    }

    private void wrapHandshake() throws IOException {
        SSLEngineResult r = wrapEngineRecord();
        if (r.getStatus() == Status.CLOSED) {
            ch.write(netOut); // an alert, best effort
            throw new SSLHandshakeException("TLS was closed during the handshake");
        }
        if (r.getStatus() == Status.BUFFER_OVERFLOW) {
            throw new SSLException("a TLS handshake message larger than the packet size " + netOut.capacity());
        }
    }

    /** @return false when more bytes must arrive first */
    private boolean unwrapHandshake() throws IOException {
        if (!netIn.hasRemaining() && !fillForHandshake()) {
            return false;
        }
        SSLEngineResult r;
        appIn.compact();
        try {
            r = engine.unwrap(netIn, appIn);
        } finally {
            appIn.flip();
        }
        return switch (r.getStatus()) {
            case OK -> true;
            case BUFFER_UNDERFLOW -> fillForHandshake();
            case CLOSED -> throw new EOFException("the peer closed TLS during the handshake");
            case BUFFER_OVERFLOW -> throw new SSLException("TLS handshake data does not fit " + appIn.capacity()
                    + " bytes");
        };
    }

    private boolean fillForHandshake() throws IOException {
        int n = fill();
        if (n < 0) {
            throw new EOFException("connection closed by the peer during the TLS handshake");
        }
        return n > 0;
    }

    /** Reads what the socket has into {@link #netIn}; @return bytes read, or -1 at end of stream */
    private int fill() throws IOException {
        netIn.compact();
        int n;
        try {
            if (!netIn.hasRemaining()) {
                throw new SSLException("a TLS record larger than the packet size " + netIn.capacity());
            }
            n = ch.read(netIn);
        } finally {
            netIn.flip();
        }
        if (!firstWordKnown && netIn.remaining() >= 4) {
            // Nothing has been consumed before the first record is complete, so these are the first bytes.
            firstWord = netIn.getInt(netIn.position());
            firstWordKnown = true;
        }
        return n;
    }

    private void runTasks() {
        Runnable task;
        while ((task = engine.getDelegatedTask()) != null) {
            task.run();
        }
    }

    /** Tells the peer why (best effort) after a failed handshake. */
    private void sendAlert() {
        try {
            wrapEngineRecord();
            ch.write(netOut);
        } catch (IOException | RuntimeException ignored) {
            // the peer learns from the close instead
        }
    }

    /**
     * Decrypted bytes not delivered yet, or a complete record not decrypted yet. A partial record does not
     * count: a wait that returned for it would spin until the rest arrives, and the socket reports that.
     */
    @Override
    public boolean hasBuffered() {
        if (appIn.hasRemaining()) {
            return true;
        }
        int n = netIn.remaining();
        if (n < RECORD_HEADER_BYTES) {
            return false;
        }
        int length = netIn.getShort(netIn.position() + 3) & 0xffff;
        return n >= RECORD_HEADER_BYTES + length;
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        long produced = appIn.hasRemaining() ? drain(dsts, offset, length) : 0;
        while (hasRemaining(dsts, offset, length)) {
            if (netIn.hasRemaining()) {
                SSLEngineResult r = engine.unwrap(netIn, dsts, offset, length);
                Status status = r.getStatus();
                if (status == Status.BUFFER_OVERFLOW) {
                    // The next record's plaintext exceeds the room left: decrypt it aside, hand over what fits.
                    appIn.clear();
                    try {
                        r = engine.unwrap(netIn, appIn);
                    } finally {
                        appIn.flip();
                    }
                    status = r.getStatus();
                    if (status == Status.BUFFER_OVERFLOW) {
                        throw new SSLException("a TLS record larger than " + appIn.capacity() + " bytes");
                    }
                    produced += drain(dsts, offset, length);
                } else {
                    produced += r.bytesProduced();
                }
                if (status == Status.CLOSED) {
                    return produced > 0 ? produced : -1;
                }
                afterEngine(r.getHandshakeStatus());
                if (status == Status.OK && r.bytesConsumed() > 0) {
                    continue;
                }
                // BUFFER_UNDERFLOW: part of a record, read more
            }
            int n = fill();
            if (n < 0) {
                return produced > 0 ? produced : -1;
            }
            if (n == 0) {
                return produced;
            }
        }
        return produced;
    }

    /** Post-handshake messages (a key update) may need an answer or a task. */
    private void afterEngine(HandshakeStatus hs) throws IOException {
        if (hs == HandshakeStatus.NEED_TASK) {
            runTasks();
        } else if (hs == HandshakeStatus.NEED_WRAP && !netOut.hasRemaining()) {
            // Sent now if nothing else waits for the socket; otherwise the next wrap of a write carries it.
            wrapEngineRecord();
            ch.write(netOut);
        }
    }

    /** Puts the record the engine wants to send of its own (handshake, alert, key update) into the empty netOut. */
    private SSLEngineResult wrapEngineRecord() throws SSLException {
        netOut.clear();
        try {
            return engine.wrap(EMPTY, netOut);
        } finally {
            netOut.flip();
        }
    }

    private long drain(ByteBuffer[] dsts, int offset, int length) {
        long moved = 0;
        for (int i = offset; i < offset + length && appIn.hasRemaining(); i++) {
            ByteBuffer d = dsts[i];
            int k = Math.min(d.remaining(), appIn.remaining());
            if (k > 0) {
                int limit = appIn.limit();
                appIn.limit(appIn.position() + k);
                d.put(appIn);
                appIn.limit(limit);
                moved += k;
            }
        }
        return moved;
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        long sent = 0;
        while (true) {
            if (netOut.hasRemaining()) {
                sent += ch.write(netOut);
                if (netOut.hasRemaining()) {
                    return sent;
                }
            }
            if (!hasRemaining(srcs, offset, length)) {
                return sent;
            }
            netOut.clear();
            try {
                do {
                    SSLEngineResult r = engine.wrap(srcs, offset, length, netOut);
                    if (r.getStatus() == Status.CLOSED) {
                        throw new SSLException("TLS is closed on this connection");
                    }
                    if (r.getStatus() == Status.BUFFER_OVERFLOW) {
                        if (netOut.position() == 0) {
                            throw new SSLException("a TLS record larger than the packet size " + netOut.capacity());
                        }
                        break;
                    }
                    if (r.getHandshakeStatus() == HandshakeStatus.NEED_TASK) {
                        runTasks();
                    }
                    if (r.bytesConsumed() == 0 && r.bytesProduced() == 0) {
                        break;
                    }
                } while (netOut.remaining() >= packetBytes && hasRemaining(srcs, offset, length));
            } finally {
                netOut.flip();
            }
        }
    }

    @Override
    public boolean flushed() {
        return !netOut.hasRemaining();
    }

    /** Once the connection serves a ring: room for {@link #BULK_RECORDS} records per socket call. */
    void growForBulk() {
        netIn = regrow(netIn, BULK_RECORDS * packetBytes);
        netOut = regrow(netOut, BULK_RECORDS * packetBytes);
    }

    private static ByteBuffer regrow(ByteBuffer b, int capacity) {
        if (b.capacity() >= capacity) {
            return b;
        }
        ByteBuffer grown = ByteBuffer.allocateDirect(capacity);
        grown.put(b);
        return grown.flip();
    }

    private static boolean hasRemaining(ByteBuffer[] bs, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            if (bs[i].hasRemaining()) {
                return true;
            }
        }
        return false;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        return one.read(this, dst);
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        return one.write(this, src);
    }
}
