package dev.kolo.samples.k8s;

import static dev.kolo.samples.k8s.ManifestsTest.propertyName;
import static dev.kolo.samples.k8s.ManifestsTest.withProperties;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kolo.elastic.ElasticJobFailedException;
import dev.kolo.runtime.Discovery;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.internal.transport.shm.SharedSegment;
import dev.kolo.samples.mnist.TrainingJob;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.batch.v1.JobTemplateSpec;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The manifests for the platforms that run training on Kubernetes: a program of your own (components/program),
 * the plain JobSet (overlays/jobset), the Kubeflow Trainer runtime and a TrainJob (trainer/), admission by Kueue
 * (components/kueue, kueue/), gangs (components/gang, trainer/runtime-gang), /dev/shm for workers sharing a pod,
 * the grace period of a stop on SIGTERM. Rendered with MiniKustomize, which {@link KustomizeTest} holds equal to the
 * real kustomize for each of these directories and variants; every object validated against its kind's schema.
 */
class PlatformManifestsTest {
    static final List<String> OVERLAYS = List.of("elastic", "job", "two-per-pod", "jobset");

    /** Every object of every directory, components enabled too, validates (schemas of every kind are carried). */
    @Test
    void everyObjectValidatesAgainstTheSchemaOfItsKind(@TempDir Path tmp) throws Exception {
        Path m = Variants.copy(tmp);
        for (String o : List.of("elastic", "job", "jobset")) { // overlays/two-per-pod has them from overlays/elastic
            Variants.withComponents(m, "overlays/" + o, "kueue", "gang");
        }
        Variants.withComponents(m, "trainer/job", "kueue");
        Set<String> kinds = new TreeSet<>();
        for (String dir : List.of("overlays/elastic", "overlays/job", "overlays/two-per-pod", "overlays/jobset",
                "trainer/runtime", "trainer/runtime-gang", "trainer/job", "kueue", "grafana")) {
            for (Path root : List.of(Manifests.renderableDir(), m)) {
                // Rendering parses every object: core kinds strictly by the model, custom kinds by their schemas.
                Overlay.renderPath(root, dir, dir).resources.forEach(r -> kinds.add(r.getKind()));
            }
        }
        assertTrue(kinds.containsAll(Set.of("JobSet", "ClusterTrainingRuntime", "TrainJob", "LocalQueue",
                "PodGroup", "StatefulSet", "Job", "Secret")), "every kind rendered: " + kinds);
    }

    /** The validator rejects what the API server would: it is not a formality. */
    @Test
    void theSchemaValidatorRejectsInvalidObjects() {
        JsonNode jobSet = Overlay.render("jobset").json("JobSet").get(0);
        var unknown = jobSet.deepCopy();
        ((com.fasterxml.jackson.databind.node.ObjectNode) unknown.path("spec")).put("replicas", 3);
        assertTrue(CrdSchemas.problems(unknown).toString().contains("spec.replicas: unknown field"),
                CrdSchemas.problems(unknown).toString());
        var noTemplate = jobSet.deepCopy();
        ((com.fasterxml.jackson.databind.node.ObjectNode) noTemplate.path("spec").path("replicatedJobs").get(0))
                .remove("template");
        assertTrue(CrdSchemas.problems(noTemplate).toString().contains("lacks required field 'template'"));
        var badPod = jobSet.deepCopy();
        ((com.fasterxml.jackson.databind.node.ObjectNode) badPod.path("spec").path("replicatedJobs").get(0)
                .path("template").path("spec").path("template").path("spec")).put("restartPolicyy", "Never");
        assertTrue(CrdSchemas.problems(badPod).toString().contains("restartPolicyy"), "the Job template is checked "
                + "by the Kubernetes model: " + CrdSchemas.problems(badPod));
        JsonNode group = Manifests.documents("apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
                + "metadata: {name: g}\nspec: {minMember: \"4\", minResources: {cpu: 2x}}\n").get(0);
        String problems = CrdSchemas.problems(group).toString();
        assertTrue(problems.contains("minMember: not of type integer") && problems.contains("does not match"),
                problems);
        JsonNode queue = Manifests.documents("apiVersion: kueue.x-k8s.io/v1beta1\nkind: LocalQueue\n"
                + "metadata: {name: q}\nspec: {clusterQueue: Team_A, stopPolicy: Never}\n").get(0);
        problems = CrdSchemas.problems(queue).toString();
        assertTrue(problems.contains("clusterQueue: 'Team_A' does not match") && problems.contains("is not one of"),
                problems);
    }

    /** The program written once in components/program reaches every worker container and a TrainJob's trainer. */
    @Test
    void yourProgramReachesEveryWorkerAndTheTrainJob(@TempDir Path tmp) throws Exception {
        Path m = Variants.copy(tmp);
        Variants.program(m);
        for (String name : OVERLAYS) {
            Overlay o = Overlay.renderFrom(m, name);
            for (Container c : o.containers()) {
                assertEquals(Variants.IMAGE, c.getImage(), name + " " + c.getName());
                assertEquals(Variants.COMMAND, c.getCommand(), name + " " + c.getName());
                assertEquals(Variants.ARGS, c.getArgs(), name + " " + c.getName());
            }
        }
        JsonNode trainer = Overlay.renderPath(m, "trainer/job", "trainjob").json("TrainJob").get(0).path("spec")
                .path("trainer");
        assertEquals(Variants.IMAGE, trainer.path("image").asText());
        assertEquals(Variants.COMMAND, strings(trainer.path("command")));
        assertEquals(Variants.ARGS, strings(trainer.path("args")));
        // The default program is the bundled sample, in the image Jib builds.
        for (String name : OVERLAYS) {
            assertEquals(ImageSpec.jibTargetImage(), Overlay.render(name).worker().getImage(), name);
        }
    }

    /**
     * Each pod of a TrainJob on kolo-distributed, its environment resolved as Kubernetes does for the pod JobSet
     * makes (the JobSet's name label, the completion index): the same job name, a distinct rank hint each, the size
     * numNodes, discovery asking the JobSet's Service; the worker's own reader accepts it.
     */
    @Test
    void theTrainerRuntimeGivesEachPodADistinctRankHintAndTheSameJobName() {
        JsonNode runtime = Overlay.renderPath(Manifests.renderableDir(), "trainer/runtime", "runtime")
                .json("ClusterTrainingRuntime").get(0);
        JsonNode trainJob = Overlay.renderPath(Manifests.renderableDir(), "trainer/job", "trainjob").json("TrainJob")
                .get(0);
        assertEquals(runtime.path("metadata").path("name").asText(), trainJob.path("spec").path("runtimeRef")
                .path("name").asText(), "the TrainJob names the runtime");
        JsonNode node = runtime.path("spec").path("template").path("spec").path("replicatedJobs").get(0);
        assertEquals("trainer", node.path("template").path("metadata").path("labels")
                .path("trainer.kubeflow.org/trainjob-ancestor-step").asText(), "Trainer's trainer job");
        JobTemplateSpec job = Manifests.JSON.convertValue(node.path("template"), JobTemplateSpec.class);
        Container c = job.getSpec().getTemplate().getSpec().getContainers().get(0);
        assertEquals("node", c.getName(), "the container a TrainJob's trainer fields reach");
        int numNodes = trainJob.path("spec").path("trainer").path("numNodes").asInt();
        String jobName = trainJob.path("metadata").path("name").asText();
        assertEquals(runtime.path("spec").path("mlPolicy").path("numNodes").asInt(), Integer.parseInt(TrainerPods.env(c,
                List.of(), Map.of("jobset.sigs.k8s.io/jobset-name", jobName), Map.of(
                        "batch.kubernetes.io/job-completion-index", "0")).get("KOLO_NP")),
                "the runtime's own KOLO_NP is its numNodes");
        Set<Integer> hints = new HashSet<>();
        for (int i = 0; i < numNodes; i++) {
            Map<String, String> env = TrainerPods.env(c, TrainerPods.list(trainJob.path("spec").path("trainer")
                    .path("env")), Map.of("jobset.sigs.k8s.io/jobset-name", jobName),
                    Map.of("batch.kubernetes.io/job-completion-index", Integer.toString(i)));
            Map<String, String> props = new HashMap<>();
            env.forEach((k, v) -> {
                if (k.startsWith("KOLO_")) {
                    props.put(propertyName(k), v);
                }
            });
            KoloConfig k = withProperties(props, KoloConfig::fromEnvironment);
            assertEquals(jobName, k.get(Settings.JOB), "the same job name in every pod: the JobSet's, the TrainJob's");
            assertEquals(numNodes, k.get(Settings.NP), "KOLO_NP is numNodes");
            assertEquals(Discovery.KUBERNETES, k.get(Settings.DISCOVERY));
            assertEquals(jobName, k.get(Settings.SERVICE_DNS), "the JobSet's headless Service is named after the JobSet");
            hints.add(Objects.requireNonNull(k.get(Settings.RANK_HINT)));
        }
        assertEquals(numNodes, hints.size(), "a distinct rank hint in each pod: " + hints);
        assertTrue(job.getSpec().getPodFailurePolicy().getRules().stream().anyMatch(r -> r.getAction().equals("Ignore")
                && r.getOnExitCodes() != null && r.getOnExitCodes().getContainerName().equals("node")
                && r.getOnExitCodes().getValues().equals(List.of(ElasticJobFailedException.STOPPED_STATUS))),
                "a stop as asked (exit 75) is a disruption");
        assertTrue(job.getSpec().getTemplate().getSpec().getTerminationGracePeriodSeconds()
                >= TrainingJob.LEAVE_TIMEOUT.toSeconds() + 30, "the grace period covers a stop on SIGTERM");
    }

    /** components/kueue queues the Job, the JobSet and the TrainJob, suspended for Kueue to admit; not listed, no. */
    @Test
    void kueueQueuesAndSuspendsTheJob(@TempDir Path tmp) throws Exception {
        Path m = Variants.copy(tmp);
        String queue = Manifests.documents(m.resolve("components/kueue/queue.yaml")).get(0).path("metadata")
                .path("name").asText();
        Map<String, String> dirs = new LinkedHashMap<>(Map.of("overlays/job", "Job", "overlays/jobset", "JobSet",
                "trainer/job", "TrainJob", "overlays/elastic", "StatefulSet"));
        for (var d : dirs.entrySet()) {
            JsonNode plain = Overlay.renderPath(Manifests.renderableDir(), d.getKey(), d.getKey()).json(d.getValue())
                    .get(0);
            assertTrue(plain.path("metadata").path("labels").path("kueue.x-k8s.io/queue-name").isMissingNode()
                    && !plain.path("spec").path("suspend").asBoolean(false), d + ": without the component, no queue");
            Variants.withComponents(m, d.getKey(), "kueue");
            JsonNode w = Overlay.renderPath(m, d.getKey(), d.getKey()).json(d.getValue()).get(0);
            assertEquals(queue, w.path("metadata").path("labels").path("kueue.x-k8s.io/queue-name").asText(), d
                    + ": the queue label");
            if (!d.getValue().equals("StatefulSet")) {
                assertTrue(w.path("spec").path("suspend").asBoolean(false), d + ": starts suspended, Kueue admits it");
            }
        }
        JsonNode local = Overlay.renderPath(m, "kueue", "kueue").json("LocalQueue").get(0);
        assertEquals(queue, local.path("metadata").path("name").asText(), "kueue/ makes the LocalQueue it names");
    }

    /** components/gang: a PodGroup whose minimum is the job's (in pods), every pod in it and scheduled by the plugin. */
    @ParameterizedTest
    @ValueSource(strings = {"elastic", "job", "two-per-pod", "jobset", "renamed:job", "renamed:two-per-pod"})
    void theGangIsTheJobsMinimum(String spec, @TempDir Path tmp) throws Exception {
        String name = spec.substring(spec.indexOf(':') + 1);
        Path m = spec.startsWith("renamed:") ? NameAndSizeTest.renamedCopy(tmp) : Variants.copy(tmp);
        Variants.withComponents(m, "overlays/" + name, "gang");
        Overlay o = Overlay.renderFrom(m, name);
        List<JsonNode> groups = o.json("PodGroup");
        assertEquals(1, groups.size());
        JsonNode group = groups.get(0);
        int perPod = o.containers().size();
        String min = o.settings().getOrDefault("KOLO_MIN_NP", o.settings().get("KOLO_NP"));
        int minPods = (Integer.parseInt(min) + perPod - 1) / perPod;
        assertEquals(minPods, group.path("spec").path("minMember").asInt(), spec + ": the gang is the job's minimum, "
                + min + " workers, in pods of " + perPod);
        PodTemplateSpec pod = o.podTemplate();
        assertEquals(group.path("metadata").path("name").asText(), pod.getMetadata().getLabels()
                .get("scheduling.x-k8s.io/pod-group"), "every pod names its group");
        assertEquals("scheduler-plugins-scheduler", pod.getSpec().getSchedulerName(), "the coscheduling scheduler");
        assertEquals(o.settings().get("KOLO_JOB") + "-workers", group.path("metadata").path("name").asText());
        assertEquals(o.settings().get("KOLO_JOB"), group.path("metadata").path("labels")
                .path("app.kubernetes.io/instance").asText());
        JsonNode gang = Overlay.renderPath(m, "trainer/runtime-gang", "gang").json("ClusterTrainingRuntime").get(0);
        assertTrue(gang.path("spec").path("podGroupPolicy").path("coscheduling").isObject(), "Trainer's gang");
    }

    /**
     * Where workers share a pod, /dev/shm is a Memory emptyDir in each of them whose limit, sized from
     * KOLO_SHM_BYTES, holds the segments of every pair of them; with the largest ring too.
     */
    @ParameterizedTest
    @ValueSource(strings = {"1048576", "67108864"})
    void devShmHoldsTheSegmentsOfThePodsWorkers(String ringBytes, @TempDir Path tmp) throws Exception {
        Path m = Variants.copy(tmp);
        Variants.setting(m, "KOLO_SHM_BYTES", ringBytes);
        int shared = 0;
        for (String name : OVERLAYS) {
            Overlay o = Overlay.renderFrom(m, name);
            int workers = o.containers().size();
            if (workers < 2) {
                continue;
            }
            shared++;
            Volume shm = o.podTemplate().getSpec().getVolumes().stream().filter(v -> o.containers().stream()
                    .allMatch(c -> c.getVolumeMounts().stream().anyMatch(x -> x.getName().equals(v.getName())
                            && x.getMountPath().equals("/dev/shm")))).findFirst()
                    .orElseThrow(() -> new AssertionError(name + ": no volume at /dev/shm in every container"));
            assertEquals("Memory", shm.getEmptyDir().getMedium(), name);
            long limit = Quantity.getAmountInBytes(shm.getEmptyDir().getSizeLimit()).longValueExact();
            long need = (long) workers * (workers - 1) / 2 * SharedSegment.size(Integer.parseInt(ringBytes));
            assertTrue(limit >= need, name + ": /dev/shm holds " + limit + " bytes, the pod's segments take " + need);
            assertTrue(limit <= 16 * need, name + ": the limit follows KOLO_SHM_BYTES (" + limit + " for " + need + ")");
        }
        assertTrue(shared > 0, "an overlay runs several workers in a pod");
    }

    private static List<String> strings(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    /**
     * The environment Kubernetes gives a pod of the Trainer runtime: the runtime's env with the TrainJob's upserted
     * (as Trainer does), {@code fieldRef}s read from the pod's labels and annotations, {@code $(VAR)} expanded from
     * the variables before it; the Secret's value and the pod IP are stand-ins.
     */
    static final class TrainerPods {
        private TrainerPods() {
        }

        static Map<String, String> env(Container c, List<io.fabric8.kubernetes.api.model.EnvVar> upserts,
                Map<String, String> labels, Map<String, String> annotations) {
            List<io.fabric8.kubernetes.api.model.EnvVar> all = new ArrayList<>(c.getEnv());
            for (var u : upserts) {
                int at = -1;
                for (int i = 0; i < all.size(); i++) {
                    at = all.get(i).getName().equals(u.getName()) ? i : at;
                }
                if (at >= 0) {
                    all.set(at, u);
                } else {
                    all.add(u);
                }
            }
            Map<String, String> out = new LinkedHashMap<>();
            for (var e : all) {
                String v;
                if (e.getValueFrom() == null) {
                    v = expand(e.getValue(), out);
                } else if (e.getValueFrom().getFieldRef() != null) {
                    v = field(e.getValueFrom().getFieldRef().getFieldPath(), labels, annotations);
                } else if (e.getValueFrom().getSecretKeyRef() != null) {
                    v = "a-secret-of-the-namespace-0123456789";
                } else {
                    continue; // resourceFieldRef: the container's limit, no KOLO_* setting
                }
                out.put(e.getName(), v);
            }
            return out;
        }

        static List<io.fabric8.kubernetes.api.model.EnvVar> list(JsonNode env) {
            List<io.fabric8.kubernetes.api.model.EnvVar> out = new ArrayList<>();
            env.forEach(n -> out.add(Manifests.JSON.convertValue(n, io.fabric8.kubernetes.api.model.EnvVar.class)));
            return out;
        }

        private static String field(String path, Map<String, String> labels, Map<String, String> annotations) {
            var m = java.util.regex.Pattern.compile("metadata\\.(labels|annotations)\\['(.+)'\\]").matcher(path);
            if (m.matches()) {
                String v = (m.group(1).equals("labels") ? labels : annotations).get(m.group(2));
                assertNotNull(v, "the pod has no " + path);
                return v;
            }
            assertEquals("status.podIP", path, "a field this test knows");
            return "10.1.2.3";
        }

        /** Kubernetes' $(VAR) expansion: only variables defined before; $$ escapes. */
        private static String expand(String value, Map<String, String> before) {
            var m = java.util.regex.Pattern.compile("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)").matcher(value == null ? ""
                    : value);
            StringBuilder b = new StringBuilder();
            while (m.find()) {
                String v = before.get(m.group(1));
                m.appendReplacement(b, java.util.regex.Matcher.quoteReplacement(v != null ? v : m.group()));
            }
            m.appendTail(b);
            return b.toString();
        }
    }
}
