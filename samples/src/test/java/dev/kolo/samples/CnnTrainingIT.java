package dev.kolo.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code worker.jar --model cnn}: the convolutional network in DJL on the PyTorch engine, trained by two
 * workers on a slice of the real Fashion-MNIST, ends with the same checksum on both and learns something.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
class CnnTrainingIT {
    @Test
    void twoWorkersTrainTheCnnToTheSameParameters() throws Exception {
        try (WorkerProcess launch = WorkerProcess.start("launch", "-np", "2", "--", "--model", "cnn",
                "--train-limit", "2048", "--epochs", "1", "--batch-size", "32", "--log-every", "8")) {
            assertEquals(0, launch.exitCode(200), launch.transcript());
            assertEquals(1, launch.lines(l -> l.startsWith("[0] train: ") && l.contains("model cnn conv5x5x16")
                    && l.contains("1 intra-op thread")).size(), launch.transcript());
            List<String> done = launch.lines(l -> l.matches("\\[[01]] kolo: done rank=\\d size=2 epochs=1 "
                    + "test_accuracy=0\\.\\d{4} checksum=[0-9a-f]{16}"));
            assertEquals(2, done.size(), launch.transcript());
            assertEquals(1, done.stream().map(l -> l.replaceAll(".*checksum=", "")).distinct().count(),
                    "equal parameters on both ranks\n" + launch.transcript());
            double accuracy = Double.parseDouble(done.get(0).replaceAll(".*test_accuracy=(\\S+).*", "$1"));
            assertTrue(accuracy > 0.5, "32 steps of 64 images leave it well above chance (0.1): " + accuracy);
        }
    }
}
