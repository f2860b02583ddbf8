package dev.kolo.samples.mnist;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/** The Fashion-MNIST training and test sets, read from the four standard IDX files (gzipped or not). */
record FashionMnist(ImageSet train, ImageSet test) {
    /** Where Debian's {@code dataset-fashion-mnist} package installs the files. */
    static final Path DEBIAN_DIR = Paths.get("/usr/share/datasets/fashion-mnist");
    /** Bytes of one image: 28 x 28 grey levels. */
    static final int PIXELS = 28 * 28;
    private static final String[] FILES = {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
        "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"};

    /**
     * Checks that all four files are present, before a worker joins its job.
     *
     * @throws IllegalArgumentException with one line saying how to get the files
     */
    static void requirePresent(Path dir) {
        List<String> missing = new ArrayList<>();
        for (String f : FILES) {
            if (find(dir, f) == null) {
                missing.add(f + "[.gz]");
            }
        }
        if (!missing.isEmpty()) {
            throw new IllegalArgumentException("Fashion-MNIST not found in " + dir + " (missing "
                    + String.join(", ", missing) + "): install it with 'apt-get install dataset-fashion-mnist' "
                    + "(Debian, files in " + DEBIAN_DIR + ") or download the four files from "
                    + "https://github.com/zalando-research/fashion-mnist (data/fashion) and pass --data DIR");
        }
    }

    /**
     * @throws IllegalArgumentException if a file is missing (saying how to get it)
     * @throws UncheckedIOException      if a file is unreadable or malformed
     */
    static FashionMnist load(Path dir) {
        requirePresent(dir);
        return new FashionMnist(set(dir, "train"), set(dir, "t10k"));
    }

    private static ImageSet set(Path dir, String prefix) {
        try {
            Path imagesFile = find(dir, prefix + "-images-idx3-ubyte");
            Path labelsFile = find(dir, prefix + "-labels-idx1-ubyte");
            IdxFile images = IdxFile.read(imagesFile);
            IdxFile labels = IdxFile.read(labelsFile);
            if (images.dims().length != 3 || labels.dims().length != 1) {
                throw new IOException(imagesFile + " / " + labelsFile + ": expected 3-dimensional images and "
                        + "1-dimensional labels");
            }
            if (images.count() != labels.count()) {
                throw new IOException(imagesFile + " holds " + images.count() + " images but " + labelsFile
                        + " " + labels.count() + " labels");
            }
            return new ImageSet(images.data(), labels.data(), images.count(), images.itemSize());
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage(), e);
        }
    }

    /** @return the file, plain or gzipped, or null */
    private static Path find(Path dir, String name) {
        for (Path p : new Path[] {dir.resolve(name + ".gz"), dir.resolve(name)}) {
            if (Files.isRegularFile(p)) {
                return p;
            }
        }
        return null;
    }
}
