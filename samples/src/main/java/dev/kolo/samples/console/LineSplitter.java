package dev.kolo.samples.console;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;

/** An output stream that hands each complete UTF-8 line, without its line end, to a consumer. */
final class LineSplitter extends OutputStream {
    private final ByteArrayOutputStream line = new ByteArrayOutputStream();
    private final Consumer<String> sink;

    LineSplitter(Consumer<String> sink) {
        this.sink = sink;
    }

    @Override
    public synchronized void write(int b) {
        if (b == '\n') {
            String s = line.toString(StandardCharsets.UTF_8);
            line.reset();
            sink.accept(s.endsWith("\r") ? s.substring(0, s.length() - 1) : s);
        } else {
            line.write(b);
        }
    }

    @Override
    public synchronized void close() {
        if (line.size() > 0) {
            write('\n');
        }
    }
}
