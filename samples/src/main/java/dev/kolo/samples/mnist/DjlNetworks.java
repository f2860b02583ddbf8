package dev.kolo.samples.mnist;

import ai.djl.ndarray.NDList;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.Blocks;
import ai.djl.nn.ParallelBlock;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.convolutional.Conv2d;
import ai.djl.nn.core.Linear;
import ai.djl.nn.norm.BatchNorm;
import ai.djl.nn.pooling.Pool;
import java.util.List;

/** The DJL networks of the sample, for 28x28 grey images and 10 classes. */
final class DjlNetworks {
    static final int CLASSES = 10;

    private DjlNetworks() {
    }

    /**
     * Two blocks of 5x5 convolution (16, then 32 filters), ReLU and 2x2 max pooling, then a hidden layer of 128
     * and the classes.
     */
    static SequentialBlock cnn() {
        return new SequentialBlock()
                .add(conv(16, 5, 1))
                .add(Activation::relu)
                .add(Pool.maxPool2dBlock(new Shape(2, 2)))
                .add(conv(32, 5, 1))
                .add(Activation::relu)
                .add(Pool.maxPool2dBlock(new Shape(2, 2)))
                .add(Blocks.batchFlattenBlock())
                .add(Linear.builder().setUnits(128).build())
                .add(Activation::relu)
                .add(Linear.builder().setUnits(CLASSES).build());
    }

    /**
     * A small ResNet sized for CPUs: a 3x3 stem of 16 filters with BatchNorm, three residual stages (16 filters
     * at 28x28, 32 at 14x14, 64 at 7x7; two 3x3 convolutions with BatchNorm each, a 1x1 projection where the
     * shape changes), global average pooling and the classes.
     */
    static SequentialBlock resnet() {
        return new SequentialBlock()
                .add(conv(16, 3, 1))
                .add(BatchNorm.builder().build())
                .add(Activation::relu)
                .add(residual(16, 1))
                .add(residual(32, 2))
                .add(residual(64, 2))
                .add(Pool.globalAvgPool2dBlock())
                .add(Linear.builder().setUnits(CLASSES).build());
    }

    /** Two 3x3 convolutions with BatchNorm, added to the input (projected by a 1x1 convolution if needed). */
    static Block residual(int filters, int stride) {
        SequentialBlock main = new SequentialBlock()
                .add(conv(filters, 3, stride))
                .add(BatchNorm.builder().build())
                .add(Activation::relu)
                .add(conv(filters, 3, 1))
                .add(BatchNorm.builder().build());
        Block shortcut = stride == 1 && filters == 16 ? Blocks.identityBlock()
                : new SequentialBlock()
                        .add(Conv2d.builder().setKernelShape(new Shape(1, 1)).optStride(new Shape(stride, stride))
                                .setFilters(filters).optBias(false).build())
                        .add(BatchNorm.builder().build());
        return new SequentialBlock()
                .add(new ParallelBlock(branches -> new NDList(branches.get(0).singletonOrThrow()
                        .add(branches.get(1).singletonOrThrow())), List.of(main, shortcut)))
                .add(Activation::relu);
    }

    private static Conv2d conv(int filters, int kernel, int stride) {
        return Conv2d.builder().setKernelShape(new Shape(kernel, kernel)).optPadding(new Shape(kernel / 2, kernel / 2))
                .optStride(new Shape(stride, stride)).setFilters(filters).build();
    }
}
