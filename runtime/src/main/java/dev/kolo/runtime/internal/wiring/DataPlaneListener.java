package dev.kolo.runtime.internal.wiring;

import dev.kolo.runtime.KoloException;
import java.io.IOException;
import java.net.BindException;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;

/**
 * The data-plane port of this worker, bound before the worker joins the cluster so that its address can be
 * advertised in the rendezvous and a port clash is reported before anything else starts.
 */
public final class DataPlaneListener implements AutoCloseable {
    private final ServerSocketChannel channel;
    private final int port;

    private DataPlaneListener(ServerSocketChannel channel) throws IOException {
        this.channel = channel;
        this.port = ((InetSocketAddress) channel.getLocalAddress()).getPort();
    }

    public static DataPlaneListener bind(String host, int port) {
        ServerSocketChannel ch = null;
        try {
            ch = ServerSocketChannel.open();
            ch.bind(new InetSocketAddress(host, port), 64);
            return new DataPlaneListener(ch);
        } catch (BindException e) {
            closeQuietly(ch);
            throw new KoloException("data port " + port + " on " + host + " is already in use or not local ("
                    + e.getMessage() + "); set KOLO_DATA_PORT (--data-port) to a free port, or 0 to pick one");
        } catch (IOException e) {
            closeQuietly(ch);
            throw new KoloException("cannot open the data port " + port + " on " + host + ": " + e.getMessage());
        }
    }

    ServerSocketChannel channel() {
        return channel;
    }

    public int port() {
        return port;
    }

    @Override
    public void close() {
        closeQuietly(channel);
    }

    private static void closeQuietly(ServerSocketChannel ch) {
        if (ch != null) {
            try {
                ch.close();
            } catch (IOException ignored) {
                // closing: nothing left to do with it
            }
        }
    }
}
