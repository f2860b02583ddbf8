package dev.kolo.runtime.internal.collectives.generation;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.kolo.runtime.DType;
import dev.kolo.runtime.ReduceOp;
import dev.kolo.runtime.internal.collectives.KernelReducer;
import dev.kolo.runtime.internal.transport.connect.TransportOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The links of a generation's channels (its own ring, and each process set's) are their own: the same ranks
 * connecting several channels of one generation at once never get one another's connections, so each
 * channel's allreduce sums its own data.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ChannelsTest {

    @Test
    void channelsConnectedAtOnceKeepTheirOwnConnections() throws Exception {
        int ranks = 4;
        int channels = 4;
        ExecutorService pool = Executors.newFixedThreadPool(ranks * channels);
        try (TestRings c = TestRings.planes(ranks, "channels", TransportOptions.builder().build())) {
            List<Future<Float>> sums = new ArrayList<>();
            for (int ch = 0; ch < channels; ch++) {
                for (int r = 0; r < ranks; r++) {
                    int channel = ch;
                    int rank = r;
                    sums.add(pool.submit(() -> {
                        GenerationDataPlane ring = new GenerationDataPlane(c.planes.get(rank).connect(1, channel, rank, c.peers),
                                new KernelReducer(dev.kolo.kernels.Kernels.java()), 64 * 1024);
                        try {
                            ByteBuffer data = Elements.direct(4).order(ByteOrder.LITTLE_ENDIAN);
                            data.putFloat(0, 100f * channel + rank);
                            ring.allreduce(1, data, DType.FLOAT32, 1, ReduceOp.SUM, 1.0, 1.0);
                            return data.getFloat(0);
                        } finally {
                            ring.close();
                        }
                    }));
                }
            }
            for (int i = 0; i < sums.size(); i++) {
                int channel = i / ranks;
                assertEquals(400f * channel + 6f, sums.get(i).get(60, TimeUnit.SECONDS), 0f,
                        "channel " + channel + ", rank " + i % ranks);
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
