package dev.kolo.runtime.internal.transport.shm;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A child process of {@link SharedSegmentTest}, on whichever JDK it is started with. {@code hold DIR}: creates three
 * segments that no peer maps, says {@code held 3} and waits to be killed. {@code close DIR}: creates a segment,
 * opens it as its peer would, checks that both mappings are in {@code /proc/self/maps}, closes both and checks that
 * neither is any longer, then says {@code mapped while open, unmapped after close}.
 */
public final class SegmentProbe {
    private SegmentProbe() {
    }

    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[1]);
        if (args[0].equals("hold")) {
            List<SharedSegment> held = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                held.add(SharedSegment.create(dir, "probe", 1, SharedRing.MIN_CAPACITY));
            }
            System.out.println("held " + held.size());
            Thread.sleep(Long.MAX_VALUE); // until the test kills this process
            return;
        }
        SharedSegment created = SharedSegment.create(dir, "probe", 2, SharedRing.MIN_CAPACITY);
        SharedSegment opened = SharedSegment.open(dir, created.reference(), SharedRing.MIN_CAPACITY, created.token());
        long whileOpen = mappings(created.name());
        created.close();
        opened.close();
        long afterClose = mappings(created.name());
        if (whileOpen < 2 || afterClose != 0) {
            System.out.println("mappings of the segment: " + whileOpen + " while open, " + afterClose + " after close ("
                    + Runtime.version() + ")");
            System.exit(1);
        }
        System.out.println("mapped while open, unmapped after close (" + Runtime.version() + ")");
    }

    /** @return how many mappings of this process are of the segment named {@code name} */
    private static long mappings(String name) throws Exception {
        return Files.readAllLines(Path.of("/proc/self/maps")).stream().filter(l -> l.contains(name)).count();
    }
}
