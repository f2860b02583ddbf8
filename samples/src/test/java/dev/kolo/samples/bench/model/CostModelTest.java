package dev.kolo.samples.bench.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The model's counts on cases worked by hand, the runtime's choice by size, and the fit on its own points. */
class CostModelTest {
    private static final double MIB = 1024 * 1024;

    @Test
    void ringAtFourRanksSendsSixMibOfFour() {
        CollectiveCost c = Algorithm.RING.of(4, 4 * MIB);
        assertEquals(6, c.steps());
        assertEquals(6 * MIB, c.bytesSent(), 1e-6);
        assertEquals(3 * MIB, c.bytesReduced(), 1e-6);
        // Blocks of 1 MiB in 512 KiB chunks: 2 messages per step.
        assertEquals(12, c.messages());
    }

    @Test
    void recursiveDoublingAddsAPreAndAPostStepOffPowersOfTwo() {
        assertEquals(4, Algorithm.RECURSIVE_DOUBLING.of(5, 1024).steps());
        assertEquals(3, Algorithm.RECURSIVE_DOUBLING.of(5, 1024).messages());
        assertEquals(4 * 1024.0, Algorithm.RECURSIVE_DOUBLING.of(5, 1024).pathBytes(), 1e-9);
        assertEquals(3, Algorithm.RECURSIVE_DOUBLING.of(8, 1024).steps());
        assertEquals(3 * 1024.0, Algorithm.RECURSIVE_DOUBLING.of(8, 1024).bytesSent(), 1e-9);
        assertEquals(1, Algorithm.RECURSIVE_DOUBLING.of(2, 1024).steps());
    }

    @Test
    void rabenseifnerAtEightRanksSendsSevenEighthsPerPhase() {
        double b = 1 * MIB;
        CollectiveCost c = Algorithm.RABENSEIFNER.of(8, b);
        assertEquals(6, c.steps());
        assertEquals(2 * 7.0 / 8 * b, c.bytesSent(), 1e-6);
        assertEquals(7.0 / 8 * b, c.bytesReduced(), 1e-6);
        CollectiveCost six = Algorithm.RABENSEIFNER.of(6, b);
        assertEquals(2 * 2 + 2, six.steps());
        assertEquals(2 * 3.0 / 4 * b + 2 * b, six.pathBytes(), 1e-6);
    }

    @Test
    void directSendsTheWholeVectorToEveryPeer() {
        CollectiveCost c = Algorithm.DIRECT.of(4, 100);
        assertEquals(1, c.steps());
        assertEquals(3, c.messages());
        assertEquals(300, c.bytesSent(), 1e-9);
        assertEquals(300, c.bytesReduced(), 1e-9);
    }

    @Test
    void allgatherAndBroadcastCounts() {
        CollectiveCost g = Algorithm.RING_ALLGATHER.of(4, 4 * MIB);
        assertEquals(3, g.steps());
        assertEquals(3 * MIB, g.bytesSent(), 1e-6);
        assertEquals(0, g.bytesReduced());
        CollectiveCost b = Algorithm.CHAIN_BROADCAST.of(4, 4 * MIB);
        assertEquals(3, b.steps());
        assertEquals(4 * MIB, b.bytesSent(), 1e-6);
        assertEquals(4 * MIB + 2 * 0.5 * MIB, b.pathBytes(), 1e-6);
    }

    @Test
    void oneRankCostsNothing() {
        for (Algorithm a : Algorithm.values()) {
            assertEquals(CollectiveCost.NONE, a.of(1, 1000));
        }
    }

    @Test
    void theAgreementRoundTakesLogStepsAfterTheChange() {
        CostModel rd = CostModel.network(10, 25, 21.5, CostModel.Agreement.RECURSIVE_DOUBLING);
        CostModel a2a = CostModel.network(10, 25, 21.5, CostModel.Agreement.ALL_TO_ALL);
        for (int n = 2; n <= 1024; n++) {
            CollectiveCost c = rd.agreementRound(n, 161, 0);
            int ceilLog = 32 - Integer.numberOfLeadingZeros(n - 1);
            assertTrue(c.messages() <= 2L * ceilLog + 2, "messages at n " + n);
            assertTrue(c.steps() <= 2 * ceilLog + 2, "steps at n " + n);
            if (Integer.bitCount(n) == 1) {
                assertEquals(Integer.numberOfTrailingZeros(n), c.messages(), "messages at n " + n);
                assertEquals(Integer.numberOfTrailingZeros(n), c.steps(), "steps at n " + n);
            }
            CollectiveCost before = a2a.agreementRound(n, 161, 0);
            assertEquals(1, before.steps());
            assertEquals(n - 1, before.messages());
        }
        // 161 ids: 3 words per id set, three sets of 4 + 24 bytes; header 16 bytes; 8 ranks: one holders word.
        assertEquals(16 + 8 + 3 * (4 + 8 * 3) + 100, CostModel.roundMessageBytes(8, 161, 100));
        assertEquals(4, rd.agreementRound(5, 161, 0).messages(), "fold swap, 2 steps, unfold");
    }

    @Test
    void theRuntimesChoiceBySize() {
        // The table of the runtime's AllreduceAlgorithms.choose.
        assertEquals(Algorithm.DIRECT, CostModel.select(2, 8192));
        assertEquals(Algorithm.RING, CostModel.select(2, 8196));
        assertEquals(Algorithm.RING, CostModel.select(2, 64L << 20));
        assertEquals(Algorithm.DIRECT, CostModel.select(4, 8192));
        assertEquals(Algorithm.RECURSIVE_DOUBLING, CostModel.select(5, 8192));
        // A fused batch of several tensors' own buffers: neither DIRECT nor RECURSIVE_DOUBLING.
        assertEquals(Algorithm.RABENSEIFNER, CostModel.select(4, 4096, false));
        assertEquals(Algorithm.RING, CostModel.select(2, 4096, false));
        assertEquals(Algorithm.RECURSIVE_DOUBLING, CostModel.select(4, 8196));
        assertEquals(Algorithm.RECURSIVE_DOUBLING, CostModel.select(8, 4));
        assertEquals(Algorithm.RECURSIVE_DOUBLING, CostModel.select(8, 64 * 1024));
        assertEquals(Algorithm.RABENSEIFNER, CostModel.select(8, 64 * 1024 + 4));
        assertEquals(Algorithm.RABENSEIFNER, CostModel.select(8, 4L << 20));
        assertEquals(Algorithm.RING, CostModel.select(8, (4L << 20) + 4));
        // The eager bound is the runtime's RoundMessage.eagerOpBytes.
        assertEquals(64 * 1024, CostModel.eagerOpBytes(2));
        assertEquals(64 * 1024 / 3, CostModel.eagerOpBytes(4));
        assertEquals(8 * 1024, CostModel.eagerOpBytes(64));
        assertEquals("EAGER", CostModel.cachedPath(8, 8192));
        assertEquals("RECURSIVE_DOUBLING", CostModel.cachedPath(8, 16384));
    }

    @Test
    void timeIsStepsTimesAlphaPlusBytesTimesBetaPlusReducedTimesGamma() {
        CostModel m = CostModel.network(10, 25, 21.5, CostModel.Agreement.RECURSIVE_DOUBLING);
        // DIRECT at 4 ranks, 8000 B: 10 us + 3 x 8000 B at 3.125 GB/s + 3 x 8000 B at 21.5 GB/s.
        assertEquals(10e-6 + 24000 / 3.125e9 + 24000 / 21.5e9, m.allreduceSeconds(4, 8000), 1e-12);
        // RING at 2 ranks, 1 MB: 2 steps, 1e6 B sent, 5e5 B reduced.
        assertEquals(20e-6 + 1e6 / 3.125e9 + 5e5 / 21.5e9, m.allreduceSeconds(2, 1_000_000), 1e-12);
    }

    @Test
    void oversubscriptionCostsAHandOffPerStepAndSharesTheCores() {
        CostModel m = new CostModel(1e-6, 1e-9, 0, 100e-6, 0, 2, CostModel.Agreement.RECURSIVE_DOUBLING);
        // 8 ranks on 2 cores: each of 3 steps pays 1 us + 3 * 100 us (3 ranks queued ahead); 3 * 1000 bytes at 4x 1 ns.
        assertEquals(3 * (1e-6 + 300e-6) + 3000 * 1e-9 * 4, m.allreduceSeconds(8, 1000), 1e-12);
        assertEquals(1.0, m.oversubscription(4));
        assertEquals(1e-6 + 1000e-9, m.allreduceSeconds(2, 1000), 1e-12);
        assertEquals(0.0, m.oversubscription(2));
        assertEquals(1.0, m.sharing(2));
    }

    @Test
    void theResNetStepFusesWhatDoesNotRideInTheRound() {
        ResNet50Step s = ResNet50Step.of(64, CostModel.FUSION_THRESHOLD);
        assertEquals(161, s.tensors);
        assertEquals(25_557_032L * 4, s.totalBytes);
        // Backward order begins with the fc bias (4000 B), the fc weight (8 MB), then batch-norm vectors of 8 KiB
        // and of 2 KiB: the bias, one 8 KiB vector and two 2 KiB ones fit the 16 KiB budget in id order.
        assertEquals(4000 + 8192 + 2048 + 2048, s.eagerBytes);
        assertEquals(2, s.batches.size());
        assertEquals(s.totalBytes, s.eagerBytes + s.batches.stream().mapToLong(Long::longValue).sum());
        assertTrue(s.batches.get(0) <= CostModel.FUSION_THRESHOLD);
        assertTrue(s.batchTensors.get(0) > 1 && s.batchTensors.stream().mapToInt(Integer::intValue).sum() == 157);
        ResNet50Step unfused = ResNet50Step.of(64, 0);
        assertEquals(161 - 4, unfused.batches.size());
        assertTrue(unfused.batchTensors.stream().allMatch(k -> k == 1));
    }

    @Test
    void theFitRecoversTheParametersOfItsOwnPoints() {
        CostModel truth = new CostModel(30e-6, 1 / 2.0e9, 1 / 21.5e9, 60e-6, 15e-6, 2,
                CostModel.Agreement.RECURSIVE_DOUBLING);
        List<MeasuredPoint> points = new ArrayList<>();
        for (int n : new int[] {2, 4, 8}) {
            for (long b = 4; b <= 64L << 20; b *= 4) {
                points.add(new MeasuredPoint(n, b, truth.cachedAllreduceSeconds(n, b)));
            }
        }
        CostModel base = CostModel.network(10, 25, 21.5, CostModel.Agreement.RECURSIVE_DOUBLING);
        CostModel fit = CostModelFit.fit(base, 2, points);
        assertEquals(truth.alpha, fit.alpha, truth.alpha * 1e-6);
        assertEquals(truth.beta, fit.beta, truth.beta * 1e-6);
        assertEquals(truth.handoff, fit.handoff, truth.handoff * 1e-6);
        assertEquals(truth.overhead, fit.overhead, truth.overhead * 1e-6);
        assertEquals(1.0, CostModelFit.withinShare(fit, points, 0.30));
    }

    @Test
    void theFitKeepsParametersNonNegative() {
        // Times flat in size: no byte cost; the fit leaves beta at 0 instead of going negative.
        List<MeasuredPoint> points = new ArrayList<>();
        for (long b = 4; b <= 4096; b *= 4) {
            points.add(new MeasuredPoint(2, b, 50e-6));
        }
        CostModel fit = CostModelFit.fit(CostModel.network(10, 25, 21.5, CostModel.Agreement.RECURSIVE_DOUBLING), 2,
                points);
        assertTrue(fit.alpha >= 0 && fit.beta >= 0 && fit.handoff >= 0 && fit.overhead >= 0);
        assertEquals(50e-6, fit.cachedAllreduceSeconds(2, 1024), 50e-6 * 0.01);
    }

    @Test
    void measuredLinesAreReadAndOthersPassedOver() {
        List<MeasuredPoint> p = MeasuredPoint.parse(List.of(
                "[0] {\"bench\":\"allreduce\",\"dtype\":\"float32\",\"np\":4,\"bytes\":16,\"time_us\":312.50,"
                        + "\"algbw_GBps\":0.000,\"busbw_GBps\":0.000,\"b2b_us\":100.00}",
                "{\"bench\":\"allreduce_fused_step\",\"np\":4,\"tensors\":161,\"bytes\":1,\"step_ms\":1.0}",
                "some log line"));
        assertEquals(List.of(new MeasuredPoint(4, 16, 312.5e-6)), p);
    }

    /**
     * The model's choice mirrors the runtime's table (the model lives in the samples, which use the public API
     * only, so it cannot call it): this test holds them together for every job size to 1024 and sizes around
     * every threshold.
     */
    @Test
    void theModelChoosesAsTheRuntimeDoes() {
        dev.kolo.runtime.internal.collectives.AllreduceAlgorithms runtime =
                dev.kolo.runtime.internal.collectives.AllreduceAlgorithms.defaults();
        long[] sizes = {0, 1, 4, 8191, 8192, 8193, 65535, 65536, 65537, (4L << 20) - 1, 4L << 20, (4L << 20) + 1,
                64L << 20};
        for (int n = 2; n <= 1024; n++) {
            for (long bytes : sizes) {
                for (boolean contiguous : new boolean[] {true, false}) {
                    assertEquals(runtime.choose(bytes, n, contiguous).name(),
                            CostModel.select(n, bytes, contiguous).name(),
                            "np " + n + ", " + bytes + " bytes, contiguous " + contiguous);
                }
            }
        }
    }
}
