package dev.kolo.runtime;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * The runtime's settings, each declared once as a {@code public static final} {@link Setting} field, and the
 * registry of every module's: {@link #all()} gathers these fields and those of each module's
 * {@link ModuleSettings} on the class path. {@link KoloConfig} holds the runtime's; the kernels are chosen from
 * {@link #KERNELS} and {@link #KERNELS_ISA} when a worker starts (they are declared here because the kernels module
 * sits below the runtime, and the runtime hands them over); the other modules read theirs with
 * {@link Setting#fromEnvironment()}. {@link KoloConfig#fromEnvironment()} checks all of them, so a bad value stops
 * a worker before it joins.
 */
public final class Settings {
    /** Most workers a job may have: every worker connects to every other (the alltoall mesh). */
    public static final int MAX_WORKERS = 4096;
    /** Longest duration any setting accepts: 30 days, well past any job's wait and short of overflow. */
    public static final Duration MAX_DURATION = Duration.ofDays(30);
    /** Longest coordinator batching window: longer ones only delay ops that are ready on every rank. */
    public static final Duration MAX_CYCLE_TIME = Duration.ofSeconds(1);
    /** Largest tensor cache: a round message carries two bits per entry. */
    public static final int MAX_CACHE_CAPACITY = 1 << 24;
    /** Fewest characters of a job secret: proofs on the wire must not allow guessing it offline. */
    public static final int MIN_SECRET_LENGTH = 16;
    /** How many consecutive cluster ports LOCAL discovery uses, so that several local jobs fit on one machine. */
    public static final int LOCAL_PORT_COUNT = 20;

    private static final String NAME_PATTERN = "[A-Za-z0-9][A-Za-z0-9._-]{0,62}";

    public static final Setting<String> JOB = Setting.named("KOLO_JOB", Function.identity()).flag("--job")
            .byDefault("kolo", "`kolo` (`launch`: a fresh name)")
            .accepts("1-63 letters, digits, '.', '_' or '-', starting with a letter or digit",
                    v -> v.matches(NAME_PATTERN))
            .describe("job name; also the cluster name (plus a tag of the secret, if any), so two jobs never mix");

    public static final Setting<Integer> NP = count("KOLO_NP", "--np", 1, "1")
            .describe("number of workers the rendezvous waits for");

    public static final Setting<Integer> MIN_NP = count("KOLO_MIN_NP", "--min-np", null, "")
            .derivedFrom(c -> c.get(NP), "`KOLO_NP`")
            .describe("fewest workers of an elastic job (below `KOLO_NP` makes the job elastic)");

    public static final Setting<Integer> MAX_NP = count("KOLO_MAX_NP", "--max-np", null, "")
            .derivedFrom(c -> Math.max(c.get(NP), c.get(MIN_NP)), "`KOLO_NP`")
            .describe("most workers of an elastic job");

    public static final Setting<Discovery> DISCOVERY = choice("KOLO_DISCOVERY", "--discovery", Discovery.class,
            Discovery.LOCAL).describe("`local` (loopback), `members` (explicit list) or `kubernetes` (DNS of a "
                    + "headless Service)");

    public static final Setting<List<String>> MEMBERS = Setting.named("KOLO_MEMBERS", Settings::memberList)
            .flag("--members")
            .accepts("a comma-separated list of host or host:port (port 1-65535)", v -> !v.isEmpty())
            .shownAs(v -> String.join(",", v))
            .describe("cluster addresses for `members` discovery");

    public static final Setting<String> SERVICE_DNS = text("KOLO_SERVICE_DNS", "--service-dns",
            "a DNS name such as kolo-workers.default.svc.cluster.local")
            .describe("headless Service DNS name for `kubernetes` discovery");

    public static final Setting<String> HOST = text("KOLO_HOST", "--host", "an address or host name")
            .derivedFrom(c -> c.get(DISCOVERY) == Discovery.LOCAL ? "127.0.0.1" : thisMachinesAddress(),
                    "`127.0.0.1` for `local`, else this machine's address")
            .describe("address to bind and advertise");

    public static final Setting<Integer> CLUSTER_PORT = port("KOLO_CLUSTER_PORT", "--cluster-port",
            5701, false)
            .describe("cluster member port (`local` moves up to the next free of "
                    + LOCAL_PORT_COUNT + ")");

    public static final Setting<Integer> SERVICE_PORT = port("KOLO_SERVICE_PORT", "--service-port", 1, false)
            .derivedFrom(c -> c.get(CLUSTER_PORT), "`KOLO_CLUSTER_PORT`")
            .describe("cluster port `kubernetes` discovery looks for at each address of the Service: that of every "
                    + "pod's first worker, when a pod runs several workers on several cluster ports (they then share "
                    + "memory)");

    public static final Setting<Integer> DATA_PORT = port("KOLO_DATA_PORT", "--data-port", 0, true)
            .describe("data-plane port; 0 takes any free port");

    public static final Setting<Integer> METRICS_PORT = port("KOLO_METRICS_PORT", "--metrics-port", 9404, true)
            .describe("HTTP metrics and health port; 0 disables (when set, `launch` gives a host's worker i this "
                    + "port + i; left at its default under `local` discovery, a taken port moves up to a free one)");

    public static final Setting<String> METRICS_HOST = text("KOLO_METRICS_HOST", "--metrics-host", "an address")
            .derivedFrom(c -> c.get(HOST), "`KOLO_HOST`")
            .describe("address the metrics port (metrics, health, status page) binds; `127.0.0.1` keeps it to this "
                    + "machine and `kubectl port-forward`, `0.0.0.0` opens it on every interface");

    public static final Setting<Duration> RENDEZVOUS_TIMEOUT = seconds("KOLO_RENDEZVOUS_TIMEOUT",
            "--rendezvous-timeout", Duration.ofSeconds(60), false)
            .describe("how long to wait for the other workers before failing with a report of who arrived");

    public static final Setting<Duration> HEARTBEAT_TIMEOUT = seconds("KOLO_HEARTBEAT_TIMEOUT",
            "--heartbeat-timeout", Duration.ofSeconds(5), false)
            .describe("silence after which a hung worker is declared lost");

    public static final Setting<Duration> OP_TIMEOUT = seconds("KOLO_OP_TIMEOUT", "--op-timeout",
            Duration.ofMinutes(30), false).describe("deadline of any single collective or barrier");

    public static final Setting<Integer> RANK_HINT = Setting.named("KOLO_RANK_HINT", Integer::valueOf)
            .flag("--rank-hint").byDefault(null, "the pod ordinal on `kubernetes`")
            .accepts("a whole number from 0 to " + (MAX_WORKERS - 1), v -> v >= 0 && v < MAX_WORKERS)
            .describe("stable rank to ask for");

    public static final Setting<Long> FUSION_THRESHOLD = Setting.named("KOLO_FUSION_THRESHOLD", Long::valueOf)
            .flag("--fusion-threshold").byDefault(64L << 20)
            .accepts("a whole number of bytes from 0 to " + Integer.MAX_VALUE, v -> v >= 0 && v <= Integer.MAX_VALUE)
            .describe("largest fused allreduce buffer in bytes; 0 disables fusion");

    public static final Setting<Duration> CYCLE_TIME = Setting.named("KOLO_CYCLE_TIME",
            v -> fromUnits(v, 1e6)).flag("--cycle-time").byDefault(Duration.ofMillis(1), "1 ms")
            .accepts("a number of milliseconds from 0 to " + MAX_CYCLE_TIME.toMillis(),
                    v -> !v.isNegative() && v.compareTo(MAX_CYCLE_TIME) <= 0)
            .shownAs(v -> v.toNanos() / 1e6 + " ms")
            .describe("how long the coordinator batches ready tensors while others are half-submitted");

    public static final Setting<Boolean> AUTOTUNE = Setting.named("KOLO_AUTOTUNE", Settings::bool)
            .flag("--autotune").byDefault(false).accepts("true or false", v -> true)
            .describe("tune the fusion threshold, the eager size of cached steps and the cycle time during the job's "
                    + "first steps (rank 0 tries settings and scores each by the bytes per second of the real steps; "
                    + "every rank switches at the same agreement round), then keep the best");

    public static final Setting<String> AUTOTUNE_LOG = text("KOLO_AUTOTUNE_LOG", "--autotune-log", "a file path")
            .describe("with `KOLO_AUTOTUNE`, write one CSV row per sample to this file on rank 0: the values tried, "
                    + "the bytes and seconds measured and the score");

    /*
     * The cache's default is larger than the tensors of any real step (a large model has a few thousand), so a
     * step never evicts its own tensors; an entry costs a few hundred bytes, and only entries in use cost anything
     * in an agreement round (a bit each).
     */
    public static final Setting<Integer> CACHE_CAPACITY = Setting.named("KOLO_CACHE_CAPACITY", Integer::valueOf)
            .flag("--cache-capacity").byDefault(65536)
            .accepts("a whole number from 0 (off) to " + MAX_CACHE_CAPACITY, v -> v >= 0 && v <= MAX_CACHE_CAPACITY)
            .describe("tensor specs each generation caches (a cached tensor is agreed among the ranks over the data "
                    + "plane, without the coordinator); 0 disables the cache");

    /** Largest recursive-doubling threshold: the algorithm keeps a scratch buffer of that size per generation. */
    public static final int MAX_RECURSIVE_DOUBLING_BYTES = 16 << 20;

    public static final Setting<Integer> RECURSIVE_DOUBLING_MAX_BYTES = Setting.named(
            "KOLO_RECURSIVE_DOUBLING_MAX_BYTES", Integer::valueOf).flag("--recursive-doubling-max-bytes")
            .byDefault(65536)
            .accepts("a whole number of bytes from 0 (off) to " + MAX_RECURSIVE_DOUBLING_BYTES,
                    v -> v >= 0 && v <= MAX_RECURSIVE_DOUBLING_BYTES)
            .describe("largest allreduce of 3 or more ranks that takes recursive doubling (log2 n exchanges of the "
                    + "whole buffer; below it 4 or fewer ranks exchange directly up to 8 KiB)");

    public static final Setting<Long> RABENSEIFNER_MAX_BYTES = Setting.named("KOLO_RABENSEIFNER_MAX_BYTES",
            Long::valueOf).flag("--rabenseifner-max-bytes").byDefault(4L << 20)
            .accepts("a whole number of bytes from 0 (off) to " + Integer.MAX_VALUE, v -> v >= 0 && v <= Integer.MAX_VALUE)
            .describe("largest allreduce of 3 or more ranks that takes Rabenseifner's recursive halving and doubling "
                    + "(2 log2 n steps); larger ones take the ring (2(n-1) steps)");

    public static final Setting<Boolean> SHM = Setting.named("KOLO_SHM", Settings::bool)
            .flag("--shm").byDefault(true).accepts("true or false", v -> true)
            .describe("move the bytes between ranks of the same host (the same address: one machine, one pod) through "
                    + "shared memory under /dev/shm instead of TCP; the data connection they authenticated on stays "
                    + "open beside it as doorbell and watch");

    /** Largest shared-memory ring: a segment holds two, and every co-located pair of ranks has one per connection. */
    public static final int MAX_SHM_BYTES = 64 << 20;

    public static final Setting<Integer> SHM_BYTES = Setting.named("KOLO_SHM_BYTES", Integer::valueOf)
            .flag("--shm-bytes").byDefault(1 << 20)
            .accepts("a power of two from 65536 to " + MAX_SHM_BYTES,
                    v -> Integer.bitCount(v) == 1 && v >= 65536 && v <= MAX_SHM_BYTES)
            .describe("bytes of each direction's ring between two co-located ranks; each connection between them "
                    + "takes a segment of twice that under /dev/shm, which counts against a pod's memory");

    public static final Setting<String> SHM_STREAM = oneOf("KOLO_SHM_STREAM", "--shm-stream", "auto", "auto",
            "always", "never")
            .describe("how a rank copies large pieces into a shared-memory ring: `always` with stores that bypass its "
                    + "caches, so that the peer reads them from memory at the same speed wherever the two cores sit; "
                    + "`never` plainly, so that the peer reads them from the writer's cache, faster where the cores "
                    + "share one and up to 7x slower where they do not (on a virtual machine this changes from run to "
                    + "run); `auto` as the reader measures cheaper, tried again every half second");

    public static final Setting<Integer> SHM_STREAM_BYTES = Setting.named("KOLO_SHM_STREAM_BYTES", Integer::valueOf)
            .flag("--shm-stream-bytes").byDefault(32768)
            .accepts("a whole number of bytes from 64", v -> v >= 64)
            .describe("smallest piece of a copy into a shared-memory ring that KOLO_SHM_STREAM may stream past the "
                    + "writer's caches; below it a plain copy is faster wherever the cores sit");

    /** Longest a wait may poll before it parks: {@link #POLL_TIME}'s bound. */
    public static final Duration MAX_POLL_TIME = Duration.ofSeconds(1);

    public static final Setting<Duration> POLL_TIME = Setting.named("KOLO_POLL_TIME", v -> fromUnits(v, 1e6))
            .flag("--poll-time").byDefault(Duration.ofMillis(30), "30 ms")
            .accepts("a number of milliseconds from 0 to " + MAX_POLL_TIME.toMillis(),
                    v -> !v.isNegative() && v.compareTo(MAX_POLL_TIME) <= 0)
            .shownAs(v -> v.toNanos() / 1e6 + " ms")
            .describe("how long a rank waiting for its peers polls (spinning, then yielding its core) before it "
                    + "parks, where each of the host's ranks has a core of its own: a parked rank wakes late where "
                    + "idle CPUs halt (0.3-3 ms on a virtual machine), and a training step's ranks wait for each "
                    + "other milliseconds at a time; ranks that outnumber the cores poll at most 1 ms, since a "
                    + "poller takes the core its peer needs");

    public static final Setting<String> CPU_BIND = oneOf("KOLO_CPU_BIND", "--cpu-bind", "auto", "auto", "off")
            .describe("ranks of one host (several workers on one machine or in one pod): `auto` binds each rank's "
                    + "process to its own equal share of the CPUs the process may use, as `mpirun --bind-to` does, "
                    + "so that the scheduler cannot stack two ranks' threads on one core while another idles "
                    + "(ranks that outnumber the CPUs share them in blocks); `off` leaves the threads where the "
                    + "system puts them");

    public static final Setting<String> HIERARCHICAL = oneOf("KOLO_HIERARCHICAL", "--hierarchical", "auto", "auto",
            "leaders", "off").describe("allreduces above the small-message sizes of a job whose hosts hold several ranks: "
                    + "`auto` reduces within each host first (shared memory), then across hosts with each rank carrying "
                    + "its share of the bytes, then gathers within each host; `leaders` lets one rank per host carry "
                    + "everything across hosts; `off` runs one flat ring over all ranks");

    public static final Setting<Duration> STALL_WARNING = seconds("KOLO_STALL_WARNING", "--stall-warning",
            Duration.ofSeconds(60), false).describe("log the ranks missing a tensor others submitted this long ago");

    /*
     * The stall shutdown's default is long enough for what one rank may legitimately do while the others wait at a
     * collective (evaluate, write a checkpoint), short enough that a rank that never submits a tensor ends the step
     * with an error rather than a hang; PyTorch's default collective timeout is the same 10 minutes.
     */
    public static final Setting<Duration> STALL_SHUTDOWN = seconds("KOLO_STALL_SHUTDOWN", "--stall-shutdown",
            Duration.ofMinutes(10), true).describe("fail such a tensor on every rank after this long, "
                    + "naming the missing ranks (a rank that submits it later fails at once); 0 waits for ever");

    public static final Setting<Duration> ELASTIC_TIMEOUT = seconds("KOLO_ELASTIC_TIMEOUT", "--elastic-timeout",
            Duration.ofSeconds(600), false).describe("how long an elastic job waits for enough workers to form a "
                    + "new generation after a change");

    public static final Setting<String> TIMELINE = text("KOLO_TIMELINE", "--timeline", "a file path")
            .describe("write a Chrome-trace timeline to this path; `{rank}` in it becomes the rank");

    /** Most ops a flight recorder keeps: a slot is about a hundred bytes, a dump about three hundred per op. */
    public static final int MAX_FLIGHT_RECORDER = 1 << 20;

    public static final Setting<Integer> FLIGHT_RECORDER = Setting.named("KOLO_FLIGHT_RECORDER", Integer::valueOf)
            .flag("--flight-recorder").byDefault(2048)
            .accepts("a whole number from 0 (off) to " + MAX_FLIGHT_RECORDER, v -> v >= 0 && v <= MAX_FLIGHT_RECORDER)
            .describe("collective ops each rank's flight recorder keeps (the last ones: name, op, dtype, shape, bytes, "
                    + "algorithm, transport, and when each was submitted, agreed, started and finished), written to "
                    + "`flight-rank-R.json` in `KOLO_FLIGHT_DIR` when an op waits past `KOLO_STALL_WARNING`, when "
                    + "an op fails, on a signal and on request; 0 turns it off");

    public static final Setting<String> FLIGHT_DIR = text("KOLO_FLIGHT_DIR", "--flight-dir", "a directory path")
            .derivedFrom(c -> Path.of(System.getProperty("java.io.tmpdir"), "kolo-flight-" + c.get(JOB)).toString(),
                    "`launch --log-dir`, else `kolo-flight-JOB` in the temporary directory")
            .describe("where each rank writes its flight recorder file (`worker.jar flight analyse DIR` reads them)");

    public static final Setting<String> JOB_SECRET = Setting.named("KOLO_JOB_SECRET", Function.identity())
            .accepts("at least " + MIN_SECRET_LENGTH + " random characters, e.g. $(head -c 32 /dev/urandom | "
                    + "base64), the same on every worker", v -> v.length() >= MIN_SECRET_LENGTH)
            .secret()
            .describe("shared secret of the job, the same on every worker; authenticates control messages and "
                    + "data connections; never logged, and no flag (a command line is visible to all)");

    public static final Setting<Path> JOB_SECRET_FILE = Setting.named("KOLO_JOB_SECRET_FILE", Path::of)
            .accepts("a file path; the file's first line is the secret", v -> true)
            .describe("file holding the job secret on its first line, read when `KOLO_JOB_SECRET` is not set "
                    + "(so that the secret is neither on a command line nor in the environment); `launch` reads "
                    + "it and hands the secret to its workers on standard input");

    public static final Setting<Boolean> INSECURE = Setting.named("KOLO_INSECURE", Settings::bool)
            .flag("--insecure").byDefault(false).accepts("true or false", v -> true)
            .describe("allow running without `KOLO_JOB_SECRET` under `members` or `kubernetes` discovery");

    public static final Setting<String> TLS_CERT = text("KOLO_TLS_CERT", "--tls-cert", "a PEM file path")
            .describe("PEM certificate chain of this worker; with `KOLO_TLS_KEY` and `KOLO_TLS_CA` (all three or "
                    + "none) turns on mutual TLS 1.3 for the event bus and the data plane");

    public static final Setting<String> TLS_KEY = text("KOLO_TLS_KEY", "--tls-key", "a PEM file path")
            .describe("PEM private key of this worker, PKCS#8 (`BEGIN PRIVATE KEY`), unencrypted");

    public static final Setting<String> TLS_CA = text("KOLO_TLS_CA", "--tls-ca", "a PEM file path")
            .describe("PEM bundle of the CA(s) every peer's certificate must chain to: the job's CA");

    public static final Setting<String> KERNELS = oneOf("KOLO_KERNELS", "--kernels", "auto", "auto", "native",
            "java").describe("reduction kernels: `native` (SIMD, fails if the library cannot load), `java`, or "
                    + "`auto` (native if it loads)");

    public static final Setting<String> KERNELS_ISA = oneOf("KOLO_KERNELS_ISA", "--kernels-isa", null, "scalar",
            "avx2", "avx512").byDefault(null, "the best this CPU has")
            .describe("highest instruction set the native kernels use");

    private Settings() {
    }

    /**
     * @return every setting: the runtime's, then each module's on the class path (in the order of the modules'
     *         names), each in the order of its declaration; this is the order of the documentation
     */
    public static List<Setting<?>> all() {
        return SettingRegistry.all();
    }

    /**
     * @return every setting of {@link #all()} as the Markdown table of docs/configuration.md: variable, flag, default, accepted
     *         values, meaning
     */
    public static String markdownTable() {
        StringBuilder sb = new StringBuilder("| variable | flag | default | accepts | meaning |\n|---|---|---|---|---|\n");
        for (Setting<?> s : all()) {
            sb.append("| `").append(s.name()).append("` | ").append(s.flag().map(f -> "`" + f + "`").orElse(""))
                    .append(" | ").append(cell(s.defaultText())).append(" | ").append(cell(s.accepted()))
                    .append(" | ").append(cell(s.description())).append(" |\n");
        }
        return sb.toString();
    }

    /** This machine's address, the host a worker advertises outside LOCAL discovery unless KOLO_HOST is set. */
    private static String thisMachinesAddress() {
        try {
            return InetAddress.getLocalHost().getHostAddress();
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException("cannot determine this machine's address (" + e.getMessage()
                    + "); set KOLO_HOST to the address other workers reach this one at");
        }
    }

    private static String cell(String text) {
        return text.replace("|", "\\|");
    }

    private static Setting.Builder<Integer> count(String name, String flag, Integer def, String defText) {
        return Setting.named(name, Integer::valueOf).flag(flag).byDefault(def, defText)
                .accepts("a whole number from 1 to " + MAX_WORKERS, v -> v >= 1 && v <= MAX_WORKERS);
    }

    private static Setting.Builder<Integer> port(String name, String flag, int def, boolean zeroAllowed) {
        int min = zeroAllowed ? 0 : 1;
        return Setting.named(name, Integer::valueOf).flag(flag).byDefault(def, String.valueOf(def))
                .accepts("a port from " + min + " to 65535", v -> v >= min && v <= 65535);
    }

    private static Setting.Builder<Duration> seconds(String name, String flag, Duration def, boolean zeroAllowed) {
        return Setting.named(name, v -> fromUnits(v, 1e9)).flag(flag)
                .byDefault(def, def.toSeconds() + " s")
                .accepts("a number of seconds from " + (zeroAllowed ? "0" : "0.001") + " to " + MAX_DURATION.toSeconds()
                        + " (30 days)", v -> (zeroAllowed ? !v.isNegative() : v.toMillis() >= 1)
                                && v.compareTo(MAX_DURATION) <= 0)
                .shownAs(v -> v.toMillis() / 1000.0 + " s");
    }

    private static Setting.Builder<String> text(String name, String flag, String accepted) {
        return Setting.named(name, Function.identity()).flag(flag).accepts(accepted, v -> !v.isBlank());
    }

    private static <E extends Enum<E>> Setting.Builder<E> choice(String name, String flag, Class<E> type, E def) {
        String names = Arrays.stream(type.getEnumConstants()).map(e -> e.name().toLowerCase(Locale.ROOT))
                .collect(Collectors.joining(", "));
        return Setting.named(name, v -> Enum.valueOf(type, v.toUpperCase(Locale.ROOT))).flag(flag)
                .byDefault(def, "`" + def.name().toLowerCase(Locale.ROOT) + "`").accepts("one of " + names, v -> true)
                .shownAs(v -> v.name().toLowerCase(Locale.ROOT));
    }

    private static Setting.Builder<String> oneOf(String name, String flag, String def, String... values) {
        List<String> allowed = List.of(values);
        return Setting.named(name, v -> v.toLowerCase(Locale.ROOT)).flag(flag)
                .byDefault(def, def == null ? "" : "`" + def + "`")
                .accepts("one of " + String.join(", ", allowed), allowed::contains);
    }

    /** Text in the given unit (nanoseconds per unit), finite and within {@link #MAX_DURATION}, as a Duration. */
    private static Duration fromUnits(String text, double nanosPerUnit) {
        double nanos = Double.parseDouble(text) * nanosPerUnit;
        if (!Double.isFinite(nanos) || nanos > MAX_DURATION.toNanos() || nanos < -MAX_DURATION.toNanos()) {
            return null; // NaN, infinities and overflows are answered like any value out of range
        }
        return Duration.ofNanos(Math.round(nanos));
    }

    private static Boolean bool(String v) {
        switch (v.toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes" -> {
                return true;
            }
            case "false", "0", "no" -> {
                return false;
            }
            default -> {
                return null;
            }
        }
    }

    private static List<String> memberList(String v) {
        List<String> out = new ArrayList<>();
        for (String part : v.split(",")) {
            if (!part.isBlank()) {
                MemberAddress.parse(part);
                out.add(part.strip());
            }
        }
        return out;
    }
}
