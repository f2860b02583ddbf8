package dev.kolo.runtime;

import dev.kolo.testing.StdinWatch;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;

/**
 * A worker process for {@code CoLocatedCpuBindingTest}: joins the job from its {@code KOLO_*} settings, notes its
 * main thread's CPUs as {@code Kolo.init} returns, runs a barrier and an allreduce, then prints those and the CPU
 * lists the kernel reports for all its threads, and stays until its standard input
 * closes (so that no rank's exit changes the others' generation while they print).
 */
public final class CpuBindingWorker {
    private CpuBindingWorker() {
    }

    public static void main(String[] args) throws Exception {
        StdinWatch.exitWhenClosed();
        try (Kolo kolo = Kolo.init()) {
            String atInit = cpusAllowedList(Files.readString(Path.of("/proc/thread-self/status")));
            kolo.barrier();
            kolo.allreduce("x", Tensor.of(new float[] {kolo.rank()}, 1), ReduceOp.SUM);
            System.out.println("cpus rank=" + kolo.rank() + " atInit=" + atInit + " threads="
                    + String.join(";", everyThreadsCpus()));
            Thread.sleep(Long.MAX_VALUE);
        }
    }

    /** Each distinct "Cpus_allowed_list" of this process's threads. */
    static Set<String> everyThreadsCpus() throws IOException {
        Set<String> lists = new TreeSet<>();
        try (DirectoryStream<Path> threads = Files.newDirectoryStream(Path.of("/proc/self/task"))) {
            for (Path t : threads) {
                try {
                    lists.add(cpusAllowedList(Files.readString(t.resolve("status"))));
                } catch (IOException ended) {
                    // the thread ended while listed
                }
            }
        }
        return lists;
    }

    static String cpusAllowedList(String status) {
        for (String line : status.split("\n")) {
            if (line.startsWith("Cpus_allowed_list:")) {
                return line.substring(line.indexOf(':') + 1).trim();
            }
        }
        throw new IllegalStateException("no Cpus_allowed_list in " + status);
    }
}
