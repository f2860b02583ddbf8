package dev.kolo.runtime.internal.bootstrap;

import dev.kolo.runtime.Discovery;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.KoloConfigurationException;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.internal.cluster.ShutdownQuietLogging;
import dev.kolo.runtime.jvm.JvmOptions;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The checks a worker passes before it binds or joins anything: a worker that fails one never enters the job. */
public final class Preflight {
    private static final Logger LOG = LoggerFactory.getLogger(WorkerBootstrap.LOGGER);
    /** The JVM's options are said once per process: every later worker of the process would only repeat it. */
    private static final AtomicBoolean JVM_OPTIONS_SAID = new AtomicBoolean();

    private Preflight() {
    }

    /**
     * Outside LOCAL discovery the worker's ports face a network: without a secret anyone who reaches them
     * could join the job, send it control messages and open data connections. Refuse that unless the user
     * says the network is trusted.
     *
     * @throws KoloConfigurationException outside LOCAL discovery without a job secret or KOLO_INSECURE
     */
    public static void checkSecurity(KoloConfig config) {
        if (config.isSet(Settings.JOB_SECRET)) {
            LOG.info("job '{}': control messages and data connections are authenticated with KOLO_JOB_SECRET",
                    config.get(Settings.JOB));
            return;
        }
        if (config.get(Settings.DISCOVERY) == Discovery.LOCAL) {
            return;
        }
        if (!config.get(Settings.INSECURE)) {
            throw new KoloConfigurationException("discovery '" + config.get(Settings.DISCOVERY).name().toLowerCase(java.util.Locale.ROOT)
                    + "' without KOLO_JOB_SECRET: anyone who can reach this worker's ports could join job '"
                    + config.get(Settings.JOB) + "' and send it commands; set the same KOLO_JOB_SECRET on every worker (on "
                    + "Kubernetes from a Secret; at least " + Settings.MIN_SECRET_LENGTH + " random characters, "
                    + "e.g. $(head -c 32 /dev/urandom | base64)), or set KOLO_INSECURE=true (--insecure) on a "
                    + "network where everyone is trusted");
        }
        LOG.warn("job '{}' runs without authentication (KOLO_INSECURE=true): anyone who can reach its cluster, "
                + "event-bus and data ports can join it and send it commands", config.get(Settings.JOB));
    }

    /** Chooses the process's kernels before joining: a worker that cannot use the ones asked for never joins. */
    static void useKernels(KoloConfig config) {
        try {
            dev.kolo.kernels.Kernels.configure(config.get(Settings.KERNELS), config.get(Settings.KERNELS_ISA));
        } catch (IllegalStateException e) {
            throw new KoloConfigurationException(e.getMessage() + "; set KOLO_KERNELS=java or auto to use the Java kernels");
        }
    }

    /**
     * A program started by hand ({@code java -cp ... Main}, no launcher, no flags) lacks the module access
     * Hazelcast asks for. Say once, in one line, what is missing and how to give it, before Hazelcast starts; its
     * own multi-line warning then goes to DEBUG (see {@link ShutdownQuietLogging}), so that it is said once.
     * A worker runs without these options, only without Hazelcast's fastest paths: a warning, not an error.
     */
    static void checkJvmOptions() {
        List<String> missing = JvmOptions.missing(com.hazelcast.core.Hazelcast.class.getModule());
        if (missing.isEmpty()) {
            return;
        }
        ShutdownQuietLogging.accessMissingSaid();
        if (JVM_OPTIONS_SAID.compareAndSet(false, true)) {
            LOG.warn(jvmOptionsMessage(missing));
        }
    }

    /** The one line that names the missing options and the three ways to give them. */
    static String jvmOptionsMessage(List<String> missing) {
        return "this JVM lacks options Kolo asks for: " + String.join(" ", missing) + " (Hazelcast, Kolo's cluster, "
                + "reaches into JDK packages for its fastest paths; from JDK 24 the JDK warns unless sun.misc.Unsafe "
                + "and native access are allowed); Kolo runs without them. To give them: start the program through "
                + "'java -jar worker.jar launch -np N -- java -cp ... Main', which adds them; for 'java -jar app.jar' "
                + "put 'Add-Opens: " + JvmOptions.manifestAddOpens() + "', 'Add-Exports: "
                + JvmOptions.manifestAddExports() + "' and 'Enable-Native-Access: " + JvmOptions.TARGET + "' in the "
                + "jar's manifest; or write the options above on java's command line or in JDK_JAVA_OPTIONS";
    }
}
