package dev.kolo.runtime.internal.bootstrap;

import dev.kolo.runtime.Discovery;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.KoloConfigurationException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The checks a worker passes before it binds or joins anything: a worker that fails one never enters the job. */
public final class Preflight {
    private static final Logger LOG = LoggerFactory.getLogger(WorkerBootstrap.LOGGER);

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
        if (config.hasJobSecret()) {
            LOG.info("job '{}': control messages and data connections are authenticated with KOLO_JOB_SECRET",
                    config.jobName());
            return;
        }
        if (config.discovery() == Discovery.LOCAL) {
            return;
        }
        if (!config.insecure()) {
            throw new KoloConfigurationException("discovery '" + config.discovery().name().toLowerCase(java.util.Locale.ROOT)
                    + "' without KOLO_JOB_SECRET: anyone who can reach this worker's ports could join job '"
                    + config.jobName() + "' and send it commands; set the same KOLO_JOB_SECRET on every worker (on "
                    + "Kubernetes from a Secret; at least " + KoloConfig.MIN_SECRET_LENGTH + " random characters, "
                    + "e.g. $(head -c 32 /dev/urandom | base64)), or set KOLO_INSECURE=true (--insecure) on a "
                    + "network where everyone is trusted");
        }
        LOG.warn("job '{}' runs without authentication (KOLO_INSECURE=true): anyone who can reach its cluster, "
                + "event-bus and data ports can join it and send it commands", config.jobName());
    }

    /** Chooses the process's kernels before joining: a worker that cannot use the ones asked for never joins. */
    static void useKernels(KoloConfig config) {
        try {
            dev.kolo.kernels.Kernels.configure(config.kernels(), config.kernelsIsa());
        } catch (IllegalStateException e) {
            throw new KoloConfigurationException(e.getMessage() + "; set KOLO_KERNELS=java or auto to use the Java kernels");
        }
    }
}
