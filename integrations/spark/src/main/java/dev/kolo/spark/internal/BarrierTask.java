package dev.kolo.spark.internal;

import dev.kolo.runtime.Discovery;
import dev.kolo.runtime.Kolo;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Setting;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.WorkerLostException;
import dev.kolo.spark.PartitionTrainFunction;
import dev.kolo.spark.RankFailedException;
import java.io.IOException;
import java.io.Serializable;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.spark.BarrierTaskContext;
import org.apache.spark.SparkEnv;
import scala.collection.Iterator;
import scala.jdk.javaapi.CollectionConverters;
import scala.runtime.AbstractFunction1;

/**
 * What each task of the barrier stage runs: the rendezvous of the ranks through the stage, the rank's Kolo worker,
 * the user's function, and the worker's close whatever happens, so that the executor keeps no thread or port of it.
 *
 * <p>The job secret is a field of this function: Spark serializes it into the stage's task binary, which travels
 * to the executors (encrypted with {@code spark.network.crypto.enabled}) and is neither logged nor shown; it is not
 * in the conf, the environment, the job's local properties or the stage's description, which the UI and the event
 * log show.
 *
 * @param <T> the partition's elements
 * @param <R> the function's result
 */
public final class BarrierTask<T, R> extends AbstractFunction1<Iterator<T>, Iterator<R>> implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Long enough for the failed rank's close and report; a peer that died without one fails the stage too. */
    private static final Duration CANCEL_WAIT = Duration.ofSeconds(30);

    private final PartitionTrainFunction<T, R> fn;
    private final int size;
    private final String jobName;
    private final String secret;
    private final Map<String, String> settings;

    /**
     * @param fn       the user's training
     * @param size     the number of ranks (the stage's partitions)
     * @param jobName  a name of this run, unique per run: the stage's attempt is added, so a task of an earlier
     *                 attempt never meets a later one
     * @param secret   the job secret the driver generated for this run
     * @param settings the {@code spark.kolo.*} settings, as {@link SparkSettings#read} returned them
     */
    public BarrierTask(PartitionTrainFunction<T, R> fn, int size, String jobName, String secret,
            Map<String, String> settings) {
        this.fn = fn;
        this.size = size;
        this.jobName = jobName;
        this.secret = secret;
        this.settings = new HashMap<>(settings);
    }

    @Override
    public Iterator<R> apply(Iterator<T> rows) {
        BarrierTaskContext ctx = BarrierTaskContext.get();
        int rank = ctx.partitionId();
        String executor = SparkEnv.get().executorId();
        String host = SparkEnv.get().blockManager().blockManagerId().host();
        List<Setting<?>> moduleSettings = SparkSettings.moduleSettings(settings);
        ModuleProperties.acquire(moduleSettings, settings);
        try {
            KoloConfig config = config(ctx, rank, host);
            R result;
            try (Kolo kolo = Kolo.init(config)) {
                if (kolo.rank() != rank) {
                    throw new IllegalStateException("Kolo gave this task rank " + kolo.rank() + " instead of its "
                            + "partition " + rank);
                }
                result = fn.train(kolo, CollectionConverters.asJava(rows));
                // Every rank is done before any closes: a rank that closes first ends the others' generation.
                ctx.barrier();
            }
            List<R> out = new ArrayList<>(1);
            if (rank == 0) {
                out.add(result);
            }
            return CollectionConverters.asScala(out.iterator());
        } catch (Throwable t) {
            if (lostPeer(t)) {
                awaitCancellation(ctx);
            }
            throw new RankFailedException(rank, size, executor, host, t);
        } finally {
            ModuleProperties.release(moduleSettings);
        }
    }

    private KoloConfig config(BarrierTaskContext ctx, int rank, String host) throws IOException {
        KoloConfig.Builder b = KoloConfig.builderFromEnvironment();
        SparkSettings.apply(settings, b);
        int port = freePort(host);
        // Every rank learns every rank's cluster address here; the allGather is also the moment all are present.
        String[] members = ctx.allGather(host + ":" + port);
        b.np(size).minNp(0).maxNp(0).discovery(Discovery.MEMBERS).members(Arrays.asList(members)).host(host)
                .jobName(jobName + "-a" + ctx.stageAttemptNumber());
        b.set(Settings.CLUSTER_PORT, port).set(Settings.RANK_HINT, rank).set(Settings.JOB_SECRET, secret)
                .set(Settings.CPU_BIND, "off");
        int metricsPort = b.build().get(Settings.METRICS_PORT);
        if (metricsPort != 0 && settings.containsKey("KOLO_METRICS_PORT")) {
            // Several ranks may share a host: each takes its own port after the one given.
            b.metricsPort(metricsPort + rank);
        } else {
            b.metricsPort(0);
        }
        return b.build();
    }

    private static boolean lostPeer(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof WorkerLostException) {
                return true;
            }
        }
        return false;
    }

    /**
     * A rank that failed only because another rank left (its function threw, its worker closed) waits until Spark
     * cancels the stage for that rank's failure, at most {@link #CANCEL_WAIT}: Spark reports the failure that reaches
     * the driver first, and this rank's would often come before the failure that caused it.
     */
    private static void awaitCancellation(BarrierTaskContext ctx) {
        long deadline = System.nanoTime() + CANCEL_WAIT.toNanos();
        while (!ctx.isInterrupted() && System.nanoTime() < deadline) {
            // Spark marks a killed task without always interrupting its thread, and offers no callback: poll.
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
        }
    }

    /**
     * A port free now; the short window until Kolo binds it is the price of knowing it before the allGather (Kolo's
     * cluster port must be in every rank's member list before any rank starts).
     */
    private static int freePort(String host) throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(host, 0));
            return s.getLocalPort();
        }
    }
}
