package dev.kolo.runtime;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where a job's secret comes from: {@code -Dkolo.job.secret}, else {@code KOLO_JOB_SECRET}, else the first line of
 * the file {@code KOLO_JOB_SECRET_FILE} names. The property is still accepted (existing scripts use it), but a
 * command line is visible to every user of the machine ({@code ps}), so its use is warned about once per process.
 */
public final class JobSecrets {
    private static final Logger LOG = LoggerFactory.getLogger(JobSecrets.class);
    private static final AtomicBoolean WARNED = new AtomicBoolean();

    private JobSecrets() {
    }

    /**
     * Reads the secret from the system properties, the environment or the secret file, in that order.
     *
     * @return the checked secret, or empty when none of the three is set
     * @throws IllegalArgumentException naming the setting or file whose secret is missing or not accepted
     */
    public static Optional<String> fromEnvironment() {
        return read(Setting.SettingSource.system());
    }

    static Optional<String> read(Setting.SettingSource source) {
        Optional<String> given = Settings.JOB_SECRET.read(source);
        if (given.isPresent()) {
            String property = source.raw(Settings.JOB_SECRET.property());
            if (property != null && !property.isBlank() && WARNED.compareAndSet(false, true)) {
                LOG.warn("the job secret was given as -D{}, which every user of this machine sees in 'ps': "
                        + "set {} or put it in a file named by {} instead", Settings.JOB_SECRET.property(),
                        Settings.JOB_SECRET.name(), Settings.JOB_SECRET_FILE.name());
            }
            return given;
        }
        return Settings.JOB_SECRET_FILE.read(source).map(JobSecrets::readFile);
    }

    /**
     * The secret on the first line of {@code file} (a trailing carriage return or spaces are dropped).
     *
     * @throws IllegalArgumentException naming the file when other users may read or write it (as ssh refuses a key
     *     others can read), when it cannot be read, or when its first line is no secret
     */
    public static String readFile(Path file) {
        refuseOpenToOthers(file);
        List<String> lines;
        try {
            lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalArgumentException(Settings.JOB_SECRET_FILE.name() + ": cannot read " + file + " ("
                    + e + "): name a readable file whose first line is the job secret", e);
        }
        String secret = lines.isEmpty() ? "" : lines.get(0).strip();
        if (secret.length() < Settings.MIN_SECRET_LENGTH) {
            throw new IllegalArgumentException(Settings.JOB_SECRET_FILE.name() + ": the first line of " + file
                    + " must be the job secret, at least " + Settings.MIN_SECRET_LENGTH + " characters (it has "
                    + secret.length() + "); create one with: head -c 32 /dev/urandom | base64 > " + file);
        }
        return secret;
    }

    /**
     * Refuses a file that users other than its owner and group may read or write: every user of the machine could
     * take the job's secret from it, or put one there. Where the file system has no POSIX modes there is nothing to
     * check.
     */
    private static void refuseOpenToOthers(Path file) {
        Set<PosixFilePermission> modes;
        try {
            modes = Files.getPosixFilePermissions(file);
        } catch (UnsupportedOperationException e) {
            return;
        } catch (IOException e) {
            return; // the read says why
        }
        if (modes.contains(PosixFilePermission.OTHERS_READ) || modes.contains(PosixFilePermission.OTHERS_WRITE)) {
            throw new IllegalArgumentException(Settings.JOB_SECRET_FILE.name() + ": " + file + " has mode "
                    + octal(modes) + ", so every user of this machine may " + (modes.contains(PosixFilePermission
                    .OTHERS_READ) ? "read" : "write") + " the job secret in it; it is refused. Make it yours alone: "
                    + "chmod 600 " + file);
        }
    }

    /** @return {@code modes} as ls and chmod write them, e.g. {@code 0644} */
    private static String octal(Set<PosixFilePermission> modes) {
        int bits = 0;
        for (PosixFilePermission p : modes) {
            bits |= 1 << (8 - p.ordinal()); // OWNER_READ (ordinal 0) is 0400, OTHERS_EXECUTE (8) is 0001
        }
        return String.format("0%03o", bits);
    }
}
