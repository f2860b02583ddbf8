package dev.kolo.kernels;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Reading and binding this process's CPUs through the native library, checked against what the kernel reports in
 * {@code /proc} for every thread: threads running at the bind, and a thread started after it.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ThreadAffinityTest {

    @Test
    void readsTheCpusTheKernelAllows() throws IOException {
        if (!Boolean.parseBoolean(System.getProperty("kolo.native.expected", "true"))) {
            assumeTrue(ThreadAffinity.isAvailable(), "a build without the native library");
        }
        assertTrue(ThreadAffinity.isAvailable(), "Linux with the native library: affinity must be available");
        assertArrayEquals(parse(status(Path.of("/proc/thread-self/status"))), ThreadAffinity.allowedCpus());
    }

    @Test
    void bindsEveryThreadOfTheProcessAndTheThreadsStartedLater() throws Exception {
        assumeTrue(ThreadAffinity.isAvailable());
        int[] all = ThreadAffinity.allowedCpus();
        assumeTrue(all.length >= 2, "one CPU: nothing to narrow");
        int[] last = {all[all.length - 1]};
        try {
            int bound = ThreadAffinity.bindProcess(last);
            assertTrue(bound >= 2, "the JVM runs several threads: " + bound + " bound");
            assertEquals(Set.of(Integer.toString(last[0])), everyThreadsCpus(), "every thread on the one CPU");
            assertArrayEquals(last, ThreadAffinity.allowedCpus());
            AtomicReference<String> later = new AtomicReference<>();
            Thread t = new Thread(() -> {
                try {
                    later.set(status(Path.of("/proc/thread-self/status")));
                } catch (IOException e) {
                    later.set(e.toString());
                }
            });
            t.start();
            t.join();
            assertArrayEquals(last, parse(later.get()), "a thread started later inherits the binding");
        } finally {
            ThreadAffinity.bindProcess(all);
        }
        assertEquals(Set.of(ThreadAffinity.cpuList(all)), everyThreadsCpus(), "unbound again");
    }

    @Test
    void refusesAnEmptyList() {
        assumeTrue(ThreadAffinity.isAvailable());
        assertThrows(IllegalArgumentException.class, () -> ThreadAffinity.bindProcess(new int[0]));
    }

    /** The kernel's CPU list of every thread of this process, as written in /proc (e.g. "0-1"), deduplicated. */
    private static Set<String> everyThreadsCpus() throws IOException {
        Set<String> lists = new TreeSet<>();
        try (DirectoryStream<Path> threads = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path t : threads) {
                try {
                    lists.add(cpusAllowedList(status(t.resolve("status"))));
                } catch (IOException ended) {
                    // the thread ended while listed
                }
            }
        }
        return lists;
    }

    private static String status(Path p) throws IOException {
        return Files.readString(p);
    }

    private static String cpusAllowedList(String status) {
        for (String line : status.split("\n")) {
            if (line.startsWith("Cpus_allowed_list:")) {
                return line.substring(line.indexOf(':') + 1).trim();
            }
        }
        throw new AssertionError("no Cpus_allowed_list in " + status);
    }

    /** The CPUs of a status file's "0-3,6" list. */
    private static int[] parse(String status) {
        Set<Integer> cpus = new TreeSet<>();
        for (String part : cpusAllowedList(status).split(",")) {
            String[] range = part.split("-");
            int from = Integer.parseInt(range[0]);
            int to = range.length > 1 ? Integer.parseInt(range[1]) : from;
            for (int c = from; c <= to; c++) {
                cpus.add(c);
            }
        }
        return cpus.stream().mapToInt(Integer::intValue).toArray();
    }
}
