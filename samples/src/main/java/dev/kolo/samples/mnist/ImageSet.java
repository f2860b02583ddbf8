package dev.kolo.samples.mnist;

/**
 * Images (unsigned bytes, {@code pixels} per image) and their labels 0..9, kept as bytes: a quarter of the
 * memory of floats; batches are converted as they are drawn.
 */
record ImageSet(byte[] images, byte[] labels, int count, int pixels) {

    /** @return the first {@code n} images (for quick runs and tests), sharing the arrays */
    ImageSet head(int n) {
        return n >= count ? this : new ImageSet(images, labels, n, pixels);
    }

    /**
     * Fills {@code x} (row-major, pixels scaled to [0, 1]) and {@code y} with the images
     * {@code order[from .. from+n)}.
     */
    void fill(int[] order, int from, int n, float[] x, int[] y) {
        final float scale = 1f / 255f;
        for (int b = 0; b < n; b++) {
            int img = order[from + b];
            int src = img * pixels;
            int dst = b * pixels;
            for (int k = 0; k < pixels; k++) {
                x[dst + k] = (images[src + k] & 0xff) * scale;
            }
            y[b] = labels[img];
        }
    }
}
