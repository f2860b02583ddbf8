package dev.kolo.kernels;

import java.nio.file.Files;
import java.nio.file.Path;
import org.bytedeco.javacpp.Pointer;

/**
 * A process that allocates, touches and frees ten 3 MiB blocks per round through the C library, as an engine's
 * training step does with its activations, and prints the minor page faults of rounds 2 to 20:
 * {@code faults N}. With the argument {@code tuned} it first calls {@link NativeHeap#keepLargeBlocks()}.
 */
public final class HeapChurn {
    static final int BLOCK = 3 << 20;

    private HeapChurn() {
    }

    public static void main(String[] args) throws Exception {
        // JavaCPP's own natives (malloc, free) live in the kernels' library: load it first.
        if (!NativeKernels.isAvailable()) {
            throw new IllegalStateException("native kernels unavailable", NativeKernels.unavailableCause().get());
        }
        if (args.length > 0 && args[0].equals("tuned")) {
            System.out.println("outcome " + NativeHeap.keepLargeBlocks());
        }
        Pointer[] blocks = new Pointer[10];
        long before = 0;
        for (int round = 0; round < 20; round++) {
            if (round == 1) {
                before = minorFaults();
            }
            for (int i = 0; i < blocks.length; i++) {
                blocks[i] = new Pointer(Pointer.malloc(BLOCK));
                Pointer.memset(blocks[i], round + 1, BLOCK);
            }
            for (int i = blocks.length - 1; i >= 0; i--) {
                Pointer.free(blocks[i]);
            }
        }
        System.out.println("faults " + (minorFaults() - before));
    }

    /** Field 10 of /proc/self/stat: minor faults of this process. */
    static long minorFaults() throws Exception {
        String stat = Files.readString(Path.of("/proc/self/stat"));
        String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        return Long.parseLong(fields[7]);
    }
}
