package dev.kolo.runtime;

import dev.kolo.testing.StdinWatch;


/**
 * A worker process for multi-process tests: joins the job from its {@code KOLO_*} settings, prints its rank,
 * then prints every coordinator change until its standard input closes (so it never outlives the test).
 */
public final class ProbeWorker {
    private ProbeWorker() {
    }

    public static void main(String[] args) throws Exception {
        try (Kolo kolo = Kolo.init()) {
            System.out.println("probe rank=" + kolo.rank() + " size=" + kolo.size() + " node=" + kolo.nodeId()
                    + " pid=" + ProcessHandle.current().pid() + " coordinator=" + kolo.coordinatorNode());
            kolo.barrier();
            System.out.println("probe barrier passed");
            StdinWatch.exitWhenClosed();
            String last = kolo.coordinatorNode();
            while (true) {
                String now = kolo.coordinatorNode();
                if (!now.equals(last)) {
                    System.out.println("probe coordinator=" + now + " generation=" + kolo.coordinatorGeneration());
                    last = now;
                }
                Thread.sleep(20);
            }
        }
    }
}
