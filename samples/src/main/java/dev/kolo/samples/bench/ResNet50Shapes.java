package dev.kolo.samples.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The 161 parameter tensors of ResNet-50 (53 convolutions, 53 batch norms with scale and shift, the fully
 * connected layer's weight and bias; 25,557,032 floats), in backward order: the order in which backward
 * produces their gradients.
 */
public final class ResNet50Shapes {
    private ResNet50Shapes() {
    }

    public static List<long[]> backwardOrder() {
        List<long[]> forward = new ArrayList<>();
        conv(forward, 64, 3, 7);
        norm(forward, 64);
        int in = 64;
        int[] blocks = {3, 4, 6, 3};
        int[] widths = {64, 128, 256, 512};
        for (int stage = 0; stage < 4; stage++) {
            int w = widths[stage];
            for (int b = 0; b < blocks[stage]; b++) {
                conv(forward, w, in, 1);
                norm(forward, w);
                conv(forward, w, w, 3);
                norm(forward, w);
                conv(forward, 4 * w, w, 1);
                norm(forward, 4 * w);
                if (b == 0) {
                    conv(forward, 4 * w, in, 1); // downsample path
                    norm(forward, 4 * w);
                }
                in = 4 * w;
            }
        }
        forward.add(new long[] {1000, 2048});
        forward.add(new long[] {1000});
        Collections.reverse(forward);
        return forward;
    }

    private static void conv(List<long[]> out, int outChannels, int inChannels, int kernel) {
        out.add(new long[] {outChannels, inChannels, kernel, kernel});
    }

    private static void norm(List<long[]> out, int channels) {
        out.add(new long[] {channels}); // scale
        out.add(new long[] {channels}); // shift
    }

    public static long elements(long[] shape) {
        long n = 1;
        for (long d : shape) {
            n *= d;
        }
        return n;
    }
}
