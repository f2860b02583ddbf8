package dev.kolo.samples.bench.model;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One measured allreduce time: np, bytes and seconds, read from {@code bench allreduce --json} lines
 * ({@code {"bench":"allreduce","dtype":"float32","np":N,"bytes":B,"time_us":T,...}}, the shape run-mpi.sh writes
 * too). Other lines (the fused step, logs, a launcher's rank prefix before the object) are passed over.
 */
record MeasuredPoint(int np, long bytes, double seconds) {
    private static final Pattern BENCH = Pattern.compile("\"bench\"\\s*:\\s*\"allreduce\"");
    private static final Pattern NP = Pattern.compile("\"np\"\\s*:\\s*(\\d+)");
    private static final Pattern BYTES = Pattern.compile("\"bytes\"\\s*:\\s*(\\d+)");
    private static final Pattern TIME = Pattern.compile("\"time_us\"\\s*:\\s*([0-9.eE+-]+)");

    /** The points of every file, in order; a file that cannot be read or holds none is an error that names it. */
    static List<MeasuredPoint> read(List<Path> files) {
        List<MeasuredPoint> points = new ArrayList<>();
        for (Path f : files) {
            List<MeasuredPoint> mine;
            try {
                mine = parse(Files.readAllLines(f, StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new IllegalArgumentException("--measured " + f + ": cannot read it (" + e + ")", e);
            }
            if (mine.isEmpty()) {
                throw new IllegalArgumentException("--measured " + f + ": no {\"bench\":\"allreduce\",...} line with "
                        + "np, bytes and time_us");
            }
            points.addAll(mine);
        }
        return points;
    }

    static List<MeasuredPoint> parse(List<String> lines) {
        List<MeasuredPoint> points = new ArrayList<>();
        for (String line : lines) {
            if (!BENCH.matcher(line).find()) {
                continue;
            }
            Matcher np = NP.matcher(line);
            Matcher bytes = BYTES.matcher(line);
            Matcher time = TIME.matcher(line);
            if (np.find() && bytes.find() && time.find()) {
                double micros = Double.parseDouble(time.group(1));
                if (micros > 0) {
                    points.add(new MeasuredPoint(Integer.parseInt(np.group(1)), Long.parseLong(bytes.group(1)),
                            micros * 1e-6));
                }
            }
        }
        return points;
    }
}
