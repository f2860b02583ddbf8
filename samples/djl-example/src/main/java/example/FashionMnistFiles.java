package example;

import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.dataset.RandomAccessDataset;
import ai.djl.training.dataset.Sampler;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.zip.GZIPInputStream;

/**
 * Fashion-MNIST from its IDX files on disk (as Debian's {@code dataset-fashion-mnist} installs them, gzipped or not)
 * as a DJL data set: images {@code 1 x 28 x 28} scaled to [0, 1], labels 0 to 9. Nothing is downloaded. Replace it
 * with your own {@link RandomAccessDataset}: Kolo needs only that its size and order be the same on every worker.
 */
final class FashionMnistFiles {
    static final String DEBIAN_DIR = "/usr/share/datasets/fashion-mnist";

    private FashionMnistFiles() {
    }

    /**
     * @param prefix {@code train} or {@code t10k}
     * @param limit  read the first {@code limit} images only; 0 for all
     * @param sampler which of them this rank takes, epoch after epoch
     */
    static RandomAccessDataset read(NDManager manager, Path dir, String prefix, int limit, Sampler sampler)
            throws IOException {
        byte[] pixels = idx(dir, prefix + "-images-idx3-ubyte", 16);
        byte[] labels = idx(dir, prefix + "-labels-idx1-ubyte", 8);
        int count = limit > 0 ? Math.min(limit, labels.length) : labels.length;
        float[] x = new float[count * 28 * 28];
        for (int i = 0; i < x.length; i++) {
            x[i] = (pixels[i] & 0xff) / 255f;
        }
        float[] y = new float[count];
        for (int i = 0; i < count; i++) {
            y[i] = labels[i];
        }
        return new ArrayDataset.Builder().setData(manager.create(x, new Shape(count, 1, 28, 28)))
                .optLabels(manager.create(y)).setSampling(sampler).build();
    }

    /** Ends the program with one line that says how to get the data if its files are not in {@code dir}. */
    static void requirePresent(Path dir) {
        for (String name : new String[] {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
            "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"}) {
            if (!Files.exists(dir.resolve(name + ".gz")) && !Files.exists(dir.resolve(name))) {
                System.err.println("example: Fashion-MNIST is not in " + dir + " (no " + name + "[.gz]): install it "
                        + "('apt-get install dataset-fashion-mnist' on Debian) or give its folder with --data DIR");
                System.exit(2);
            }
        }
    }

    /** The bytes after an IDX file's header, from {@code name.gz} or {@code name}. */
    private static byte[] idx(Path dir, String name, int header) throws IOException {
        Path gz = dir.resolve(name + ".gz");
        try (InputStream raw = Files.newInputStream(Files.exists(gz) ? gz : dir.resolve(name));
             DataInputStream in = new DataInputStream(Files.exists(gz) ? new GZIPInputStream(raw) : raw)) {
            in.skipNBytes(header);
            return in.readAllBytes();
        }
    }
}
