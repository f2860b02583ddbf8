package dev.kolo.samples.launch;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The small POSIX shell program every worker process starts under, here or on another host over SSH. It reads
 * the job's secret from the first line of its standard input (so that the secret is on no command line and in
 * no file), starts a watcher of the rest of that input, and then becomes the worker ({@code exec}: the process
 * the launcher reports and signals is the worker itself). When the input closes (the launcher stops the job,
 * exits, is killed, or its SSH connection is lost), the watcher sends the worker SIGTERM, and SIGKILL after the
 * grace period: no worker outlives its launch. A worker whose command is not {@code java} itself gets Kolo's JVM
 * options appended to {@code JDK_JAVA_OPTIONS} here, on its own host, so that what that host's environment holds
 * stays ({@link ChildJvmOptions}).
 */
final class WorkerWrapper {
    /** The name the wrapper runs under ({@code $0}), seen in {@code ps}. */
    static final String NAME = "kolo-worker";

    /*
     * SIGINT is ignored: Ctrl-C reaches every process of the terminal's group, and the launcher turns it into an
     * orderly stop. The watcher signals the worker's pid ($$ becomes the worker at exec); it only wakes once the
     * launcher is done with this worker, and its stdout and stderr are /dev/null so that an SSH session ends when
     * the worker does. Its input is named explicitly (fd 3): a background job's standard input is /dev/null.
     * A worker that exits within the grace period releases its pid, which another process may then get: SIGKILL
     * goes only to a pid whose start time (see STARTED) is still the worker's.
     */
    private static final String SCRIPT = """
            trap '' INT
            IFS= read -r KOLO_JOB_SECRET || { echo "kolo launch: no secret line on standard input" >&2; exit 125; }
            if [ -n "$KOLO_JOB_SECRET" ]; then export KOLO_JOB_SECRET; else unset KOLO_JOB_SECRET; fi
            %s
            %s
            worker=$$
            started=$(started "$worker")
            exec 3<&0
            ( cat <&3 >/dev/null; kill -TERM "$worker" 2>/dev/null && sleep %d \
              && [ "$(started "$worker")" = "$started" ] && kill -KILL "$worker" 2>/dev/null ) >/dev/null 2>&1 &
            exec "$@" </dev/null 3<&-
            """;

    /**
     * A shell function printing when process $1 started, empty once it is gone: the kernel's start time (field 22
     * of /proc/PID/stat, after the command name, which may hold spaces) or, without /proc, ps's start time. A pid
     * with the same start time is the same process (exec keeps both), a reused pid has a later one.
     */
    static final String STARTED = "started() { if [ -r /proc/$1/stat ]; then sed 's/^.*) //' /proc/$1/stat "
            + "2>/dev/null | cut -d' ' -f20; else ps -o lstart= -p \"$1\" 2>/dev/null; fi; }";

    private WorkerWrapper() {
    }

    /**
     * @param jdkJavaOptions options appended to {@code JDK_JAVA_OPTIONS} for the worker (none: the variable as it is)
     * @return the command that runs {@code command} under the wrapper on this machine
     */
    static List<String> local(List<String> command, List<String> jdkJavaOptions, long graceMillis) {
        List<String> out = new ArrayList<>(List.of("sh", "-c", script(jdkJavaOptions, graceMillis), NAME));
        out.addAll(command);
        return out;
    }

    /**
     * @param ssh the SSH client's command up to the host (options included)
     * @param directory the launcher's working directory, entered on the host where it exists
     * @param environment variables set for the worker (never the secret: that comes on standard input)
     * @param jdkJavaOptions options appended to {@code JDK_JAVA_OPTIONS} on the host (none: the variable as it is)
     * @return the command that runs {@code command} under the wrapper on {@code host} over SSH
     */
    static List<String> remote(List<String> ssh, String host, String directory, Map<String, String> environment,
                               List<String> command, List<String> jdkJavaOptions, long graceMillis) {
        StringBuilder remote = new StringBuilder("cd ").append(quote(directory)).append(" 2>/dev/null; exec env");
        environment.forEach((k, v) -> remote.append(' ').append(quote(k + "=" + v)));
        remote.append(" sh -c ").append(quote(script(jdkJavaOptions, graceMillis))).append(' ').append(NAME);
        command.forEach(c -> remote.append(' ').append(quote(c)));
        List<String> out = new ArrayList<>(ssh);
        out.add(host);
        out.add(remote.toString());
        return out;
    }

    static String script(List<String> jdkJavaOptions, long graceMillis) {
        return String.format(java.util.Locale.ROOT, SCRIPT, ChildJvmOptions.appendToJdkJavaOptions(jdkJavaOptions),
                STARTED, Math.max(1, (graceMillis + 999) / 1000));
    }

    /** @return {@code s} as one word for a POSIX shell */
    static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }
}
