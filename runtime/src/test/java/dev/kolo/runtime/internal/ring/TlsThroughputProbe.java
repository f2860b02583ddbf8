package dev.kolo.runtime.internal.ring;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.TestCerts;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The data plane's own cost of TLS, without processes or control plane: two ranks as threads of this JVM,
 * plain and TLS rings alternately, warmed, median and p90 per size. Not part of the suite (no "Test" suffix):
 * {@code mvn -o -q -pl runtime -am test -Dtest=TlsThroughputProbe -Dsurefire.failIfNoSpecifiedTests=false},
 * lines "PROBE ..." in runtime/target/surefire-reports/dev.kolo.runtime.internal.ring.TlsThroughputProbe-output.txt.
 */
class TlsThroughputProbe {
    @Test
    @Timeout(900)
    void probe() throws Exception {
        TestCerts certs = TestCerts.shared();
        SSLContext c0 = certs.worker0.context();
        SSLContext c1 = certs.worker1.context();
        for (int round = 0; round < 3; round++) {
            for (boolean tls : round % 2 == 0 ? new boolean[] {false, true} : new boolean[] {true, false}) {
                try (TestRings t = TestRings.planes(2, "probe", r -> tls
                        ? DataPlaneOptions.builder().tls(r == 0 ? c0 : c1).build() : DataPlaneOptions.defaults())) {
                    t.rings.addAll(t.onAll((rank, none) -> t.planes.get(rank).openRing(1, rank, t.peers), 30));
                    for (int bytes : new int[] {1 << 20, 4096, 65536, 1 << 20, 16 << 20}) { // the first is warm-up
                        int iters = bytes >= (16 << 20) ? 30 : bytes >= (1 << 20) ? 200 : 2000;
                        long base = t.reserve(2 * iters);
                        List<double[]> times = t.onAll((rank, ring) -> {
                            ByteBuffer b = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
                            double[] us = new double[iters];
                            long seq = base;
                            for (int i = 0; i < iters; i++) {
                                ring.barrier(seq++);
                                long s = System.nanoTime();
                                ring.allreduce(seq++, b, DType.FLOAT32, bytes / 4, ReduceOp.SUM);
                                us[i] = (System.nanoTime() - s) / 1e3;
                            }
                            return us;
                        }, 600);
                        double[] u = times.get(0).clone();
                        Arrays.sort(u);
                        System.out.printf(Locale.ROOT, "PROBE round %d %s bytes %d median_us %.1f p90_us %.1f GBps %.3f%n",
                                round, tls ? "tls" : "plain", bytes, u[iters / 2], u[iters * 9 / 10],
                                bytes / u[iters / 2] / 1e3);
                    }
                }
            }
        }
    }
}
