package dev.kolo.elastic;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.map.IMap;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Failure records of workers that were lost, kept in the job's cluster (map
 * {@code kolo-elastic-failures-<job>}, so every worker, including one that restarts, reads the same), and
 * the back-off they imply: a worker's first failure costs nothing, each further failure within the
 * window doubles a cool-down during which the worker is refused, and after {@code maxFailures} it is
 * refused for the rest of the job. A record is keyed by a stable worker id (a pod name, a host), so it
 * follows the worker across restarts.
 */
final class Blacklist {
    private static final Logger LOG = LoggerFactory.getLogger(Blacklist.class);

    /** The back-off policy. */
    record Policy(int maxFailures, Duration baseCooldown, Duration maxCooldown, Duration window) {
        static final Policy DEFAULT = new Policy(10, Duration.ofSeconds(5), Duration.ofMinutes(5),
                Duration.ofMinutes(30));
    }

    /** Failures of one worker: how many within the window, and when the last was recorded. */
    record Record(int failures, long lastFailureMillis) {
        static Record parse(String s) {
            int comma = s.indexOf(',');
            return new Record(Integer.parseInt(s.substring(0, comma)), Long.parseLong(s.substring(comma + 1)));
        }

        String format() {
            return failures + "," + lastFailureMillis;
        }
    }

    private final IMap<String, String> map;
    private final Policy policy;

    Blacklist(HazelcastInstance hz, String job, Policy policy) {
        this.map = hz.getMap("kolo-elastic-failures-" + job);
        this.policy = policy;
    }

    /** @return the record after one more failure at {@code now}, given the previous one (or null) */
    static Record next(Record previous, long now, Policy p) {
        if (previous == null || now - previous.lastFailureMillis() > p.window().toMillis()) {
            return new Record(1, now);
        }
        return new Record(previous.failures() + 1, now);
    }

    /** @return how long a worker with {@code failures} recent failures waits: 0, base, 2 base, 4 base, ... max */
    static long cooldownMillis(int failures, Policy p) {
        if (failures <= 1) {
            return 0;
        }
        int doublings = Math.min(failures - 2, 30);
        return Math.min(p.maxCooldown().toMillis(), p.baseCooldown().toMillis() << doublings);
    }

    /** @return why a worker with this record is refused at {@code now}, or empty if it may take part */
    static Optional<String> refusal(String worker, Record r, long now, Policy p) {
        if (r == null || now - r.lastFailureMillis() > p.window().toMillis()) {
            return Optional.empty();
        }
        if (r.failures() >= p.maxFailures()) {
            return Optional.of("worker '" + worker + "' is blacklisted: it was lost " + r.failures() + " times within "
                    + p.window().toMinutes() + " min (limit " + p.maxFailures() + "); fix its machine and give it "
                    + "another id (KOLO_WORKER_ID), or start a new job");
        }
        long until = r.lastFailureMillis() + cooldownMillis(r.failures(), p);
        if (now < until) {
            return Optional.of("worker '" + worker + "' is backing off: it was lost " + r.failures() + " times "
                    + "recently; it may rejoin after " + Instant.ofEpochMilli(until) + " (in "
                    + Math.max(1, (until - now + 999) / 1000) + " s)");
        }
        return Optional.empty();
    }

    /** Records a failure of {@code worker}, unless it is still serving a cool-down (a refusal is no new failure). */
    void recordFailure(String worker, long now) {
        for (int attempt = 0; attempt < 20; attempt++) {
            String old = map.get(worker);
            Record prev = old == null ? null : Record.parse(old);
            if (prev != null && refusal(worker, prev, now, policy).isPresent()) {
                return;
            }
            String next = next(prev, now, policy).format();
            boolean done = old == null ? map.putIfAbsent(worker, next) == null : map.replace(worker, old, next);
            if (done) {
                LOG.warn("worker '{}' was lost; failures recorded: {}", worker, next.substring(0, next.indexOf(',')));
                return;
            }
        }
        LOG.warn("could not record the failure of worker '{}': the record kept changing", worker);
    }

    /** @return why {@code worker} is refused now, or empty */
    Optional<String> refusal(String worker, long now) {
        String r = map.get(worker);
        return refusal(worker, r == null ? null : Record.parse(r), now, policy);
    }
}
