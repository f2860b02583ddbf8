package dev.kolo.runtime.internal.cluster;

import com.hazelcast.core.HazelcastInstance;
import com.hazelcast.logging.AbstractLogger;
import com.hazelcast.logging.ILogger;
import com.hazelcast.logging.LogEvent;
import com.hazelcast.logging.LoggerFactorySupport;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;
import org.slf4j.Logger;

/**
 * Hazelcast's logging, through SLF4J as before, except for members that are closing. When a job ends, its
 * workers close at about the same time; their Hazelcast members then race each other (a member finds another
 * gone before it learnt that it left, a migration answer finds no receiver, a membership event finds Vert.x
 * closed) and log that at WARN or ERROR, although nothing is wrong. Once a member has begun to close, what it
 * logs goes to DEBUG. A member that is not closing logs as usual, so a worker lost in a running job is reported;
 * only what it says about a member that announced its close (which it then finds gone, or cannot reach) goes
 * to DEBUG, until a new member joins at that address.
 *
 * <p>Hazelcast's multi-line warning about missing module access goes to DEBUG too, once Kolo has said the same in
 * one line of its own ({@link #accessMissingSaid()}, before the member starts), naming the fixes for a Kolo
 * program; Hazelcast's warning stays as it is if Kolo said nothing (its check found nothing missing) or if the
 * application installed a logger factory of its own.
 *
 * <p>Hazelcast takes a logger factory only from the system property {@value #PROPERTY}; {@link #install()}
 * sets it unless the application set one itself. Members are told apart by the prefix Hazelcast puts on each
 * message: the member's address and the cluster's name.
 */
public final class ShutdownQuietLogging extends LoggerFactorySupport {
    static final String PROPERTY = "hazelcast.logging.class";
    private static final Set<String> CLOSING = ConcurrentHashMap.newKeySet();
    /** Addresses ({@code [host]:port}) of members that announced their close. */
    private static final Set<String> DEPARTING = ConcurrentHashMap.newKeySet();
    /** How Hazelcast 5.6's warning about missing module access begins (ModularJavaUtils). */
    static final String ACCESS_WARNING = "Hazelcast is starting in a Java modular environment";
    /** Whether Kolo has logged what its JVM lacks: then Hazelcast's own warning about it would only repeat it. */
    private static volatile boolean accessMissingSaid;

    /** Makes Hazelcast log through this factory, unless the application configured a factory of its own. */
    static void install() {
        synchronized (System.getProperties()) {
            if (System.getProperty(PROPERTY) == null) {
                System.setProperty(PROPERTY, ShutdownQuietLogging.class.getName());
            }
        }
    }

    /** Kolo has logged which JVM options are missing: Hazelcast's warning about them goes to DEBUG. */
    public static void accessMissingSaid() {
        accessMissingSaid = true;
    }

    /** From now on, what this member logs at WARN or above goes to DEBUG. */
    static void closing(HazelcastInstance member) {
        prefix(member).ifPresent(CLOSING::add);
    }

    /** What members log about {@code address} (a member that announced its close) goes to DEBUG. */
    static void departing(String address) {
        DEPARTING.add(address);
    }

    /** A member joined at {@code address}: what is logged about it is reported as usual again. */
    static void arrived(String address) {
        DEPARTING.remove(address);
    }

    /** A new member at the address and with the cluster name of one that closed earlier logs as usual. */
    static void started(HazelcastInstance member) {
        prefix(member).ifPresent(CLOSING::remove);
    }

    private static java.util.Optional<String> prefix(HazelcastInstance member) {
        try {
            return java.util.Optional.of(member.getCluster().getLocalMember().getAddress() + " ["
                    + member.getConfig().getClusterName() + "] ");
        } catch (RuntimeException notRunning) {
            return java.util.Optional.empty();
        }
    }

    @Override
    protected ILogger createLogger(String name) {
        return new Quiet(org.slf4j.LoggerFactory.getLogger(name));
    }

    private static final class Quiet extends AbstractLogger {
        private final Logger logger;

        Quiet(Logger logger) {
            this.logger = logger;
        }

        @Override
        public void log(Level level, String message) {
            log(level, message, null);
        }

        @Override
        public void log(Level level, String message, Throwable thrown) {
            int v = level.intValue();
            if (v >= Level.WARNING.intValue() && (fromClosingMember(message) || aboutDepartingMember(message))) {
                logger.debug("(closing) " + message, thrown);
            } else if (v >= Level.WARNING.intValue() && accessMissingSaid && message != null
                    && message.startsWith(ACCESS_WARNING)) {
                logger.debug("(said by Kolo) " + message, thrown);
            } else if (v >= Level.SEVERE.intValue()) {
                logger.error(message, thrown);
            } else if (v >= Level.WARNING.intValue()) {
                logger.warn(message, thrown);
            } else if (v >= Level.INFO.intValue()) {
                logger.info(message, thrown);
            } else if (v >= Level.FINE.intValue()) {
                logger.debug(message, thrown);
            } else {
                logger.trace(message, thrown);
            }
        }

        /** @return whether the message starts with the prefix of a member that is closing */
        private static boolean fromClosingMember(String message) {
            return matchesAny(message, CLOSING, true);
        }

        /** @return whether the message names the address of a member that announced its close */
        private static boolean aboutDepartingMember(String message) {
            return matchesAny(message, DEPARTING, false);
        }

        private static boolean matchesAny(String message, Set<String> parts, boolean atStart) {
            if (message == null || parts.isEmpty()) {
                return false; // an iterator is an allocation: none while no member closes
            }
            for (String part : parts) {
                if (atStart ? message.startsWith(part) : message.contains(part)) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public void log(LogEvent event) {
            java.util.logging.LogRecord r = event.getLogRecord();
            log(r.getLevel(), r.getMessage(), r.getThrown());
        }

        @Override
        public Level getLevel() {
            if (logger.isTraceEnabled()) {
                return Level.FINEST;
            }
            if (logger.isDebugEnabled()) {
                return Level.FINE;
            }
            if (logger.isInfoEnabled()) {
                return Level.INFO;
            }
            return logger.isWarnEnabled() ? Level.WARNING : Level.SEVERE;
        }

        @Override
        public boolean isLoggable(Level level) {
            int v = level.intValue();
            if (v >= Level.SEVERE.intValue()) {
                return logger.isErrorEnabled();
            }
            if (v >= Level.WARNING.intValue()) {
                return logger.isWarnEnabled() || logger.isDebugEnabled();
            }
            if (v >= Level.INFO.intValue()) {
                return logger.isInfoEnabled();
            }
            return v >= Level.FINE.intValue() ? logger.isDebugEnabled() : logger.isTraceEnabled();
        }
    }
}
