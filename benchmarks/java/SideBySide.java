import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.SortedMap;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignmentUtils;
import org.apache.kafka.streams.processor.assignment.TaskAssignmentUtils.RackAwareOptimizationParams;
import org.apache.kafka.streams.processor.assignment.TaskAssignor;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;
import org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.ClientState;
import org.apache.kafka.streams.processor.internals.assignment.FallbackPriorTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.HighAvailabilityTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.LegacyStickyTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.LegacyTaskAssignor;
import org.apache.kafka.streams.processor.internals.assignment.RackAwareTaskAssignor;

/**
 * Kafka's real assignors on taskassign scenario files (docs/formats.md), timed warm, for
 * benchmarks/bench_java.py. One request per stdin line, one JSON answer per stdout line:
 *
 *   ASSIGNOR SCENARIO_PATH WARMUPS REPEATS OUTPUT_PATH
 *
 * ASSIGNOR is high_availability, legacy_sticky, fallback_prior, sticky (KIP-924), or
 * optimize_active / optimize_standby (TaskAssignmentUtils on the scenario's current_assignment).
 * What is timed, per call: building the assignor's input from the parsed scenario (ClientStates with
 * lags, or the KIP-924 ApplicationState and assignments) and the assignor call; parsing the file is not.
 * The answer holds every timed call in ms; the last call's assignment goes to OUTPUT_PATH as
 * {"clients": {process id: {"active": [...], "standby": [...]}}}.
 */
public final class SideBySide {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long LATEST_OFFSET = -2L;
    private static final long UNKNOWN_OFFSET_SUM = -3L;

    private SideBySide() { }

    /** A scenario as Kafka's leader would hand it over. */
    static final class Scenario {
        final Map<TaskId, Task> tasks = new TreeMap<>();
        final Map<ProcessId, Client> clients = new TreeMap<>();
        final Map<ProcessId, Map<TaskId, Boolean>> current = new TreeMap<>();
        AssignmentConfigs configs;
    }

    static final class Task implements TaskInfo {
        final TaskId id;
        final Set<String> stores = new HashSet<>();
        final Set<TaskTopicPartition> partitions = new HashSet<>();
        long endOffsetSum;
        boolean hasChangelog;

        Task(final TaskId id) {
            this.id = id;
        }

        @Override public TaskId id() { return id; }
        @Override public boolean isStateful() { return !stores.isEmpty(); }
        @Override public Set<String> stateStoreNames() { return stores; }
        @Override public Set<TaskTopicPartition> topicPartitions() { return partitions; }
    }

    static final class Partition implements TaskTopicPartition {
        final TopicPartition tp;
        final boolean source;
        final boolean changelog;
        final Optional<Set<String>> racks;

        Partition(final TopicPartition tp, final boolean source, final boolean changelog, final Optional<Set<String>> racks) {
            this.tp = tp;
            this.source = source;
            this.changelog = changelog;
            this.racks = racks;
        }

        @Override public TopicPartition topicPartition() { return tp; }
        @Override public boolean isSource() { return source; }
        @Override public boolean isChangelog() { return changelog; }
        @Override public Optional<Set<String>> rackIds() { return racks; }
        @Override public boolean equals(final Object o) { return o instanceof Partition && ((Partition) o).tp.equals(tp); }
        @Override public int hashCode() { return tp.hashCode(); }
    }

    static final class Client implements KafkaStreamsState {
        final ProcessId id;
        final SortedSet<String> consumers = new TreeSet<>();
        final SortedSet<TaskId> prevActive = new TreeSet<>();
        final SortedSet<TaskId> prevStandby = new TreeSet<>();
        final Map<TaskId, Long> offsetSums = new HashMap<>();
        final Map<TaskId, Long> lags = new HashMap<>();
        final Map<String, String> tags = new HashMap<>();
        Optional<String> rack = Optional.empty();

        Client(final ProcessId id) {
            this.id = id;
        }

        @Override public ProcessId processId() { return id; }
        @Override public int numProcessingThreads() { return consumers.size(); }
        @Override public SortedSet<String> consumerClientIds() { return consumers; }
        @Override public SortedSet<TaskId> previousActiveTasks() { return prevActive; }
        @Override public SortedSet<TaskId> previousStandbyTasks() { return prevStandby; }
        @Override public long lagFor(final TaskId task) { return lags.get(task); }
        @Override public SortedSet<TaskId> prevTasksByLag(final String consumer) { return new TreeSet<>(); }
        @Override public Map<TaskId, Long> statefulTasksToLagSums() { return lags; }
        @Override public Optional<org.apache.kafka.streams.state.HostInfo> hostInfo() { return Optional.empty(); }
        @Override public Map<String, String> clientTags() { return tags; }
        @Override public Optional<String> rackId() { return rack; }
    }

    static final class State implements ApplicationState {
        final Scenario s;

        State(final Scenario s) {
            this.s = s;
        }

        @Override public Map<ProcessId, KafkaStreamsState> kafkaStreamsStates(final boolean computeTaskLags) {
            return new HashMap<>(s.clients);
        }

        @Override public AssignmentConfigs assignmentConfigs() { return s.configs; }

        @Override public Map<TaskId, TaskInfo> allTasks() { return new HashMap<>(s.tasks); }
    }

    static TaskId taskId(final String text) {
        final int cut = text.lastIndexOf('_');
        return new TaskId(Integer.parseInt(text.substring(0, cut)), Integer.parseInt(text.substring(cut + 1)));
    }

    static long lag(final long end, final long offset) {  // taskassign.model.compute_lag, Kafka's rule
        if (offset == LATEST_OFFSET || offset == UNKNOWN_OFFSET_SUM) {
            return offset;
        }
        return end < offset ? end : end - offset;
    }

    static Scenario read(final String path) throws Exception {
        final JsonNode doc = JSON.readTree(new File(path));
        final Scenario s = new Scenario();
        final JsonNode c = doc.path("configs");
        final List<String> tags = new ArrayList<>();
        c.path("rack.aware.assignment.tags").forEach(t -> tags.add(t.asText()));
        final JsonNode traffic = c.path("rack.aware.assignment.traffic_cost");
        final JsonNode nonOverlap = c.path("rack.aware.assignment.non_overlap_cost");
        s.configs = new AssignmentConfigs(c.path("acceptable.recovery.lag").asLong(10_000L),
            c.path("max.warmup.replicas").asInt(2), c.path("num.standby.replicas").asInt(0),
            c.path("probing.rebalance.interval.ms").asLong(600_000L), tags,
            traffic.isNumber() ? OptionalInt.of(traffic.asInt()) : OptionalInt.empty(),
            nonOverlap.isNumber() ? OptionalInt.of(nonOverlap.asInt()) : OptionalInt.empty(),
            c.path("rack.aware.assignment.strategy").asText("none"));
        for (final JsonNode t : doc.path("tasks")) {
            final Task task = new Task(taskId(t.path("id").asText()));
            t.path("stores").forEach(x -> task.stores.add(x.asText()));
            task.endOffsetSum = t.path("changelog_end_offset_sum").asLong(0L);
            for (final JsonNode p : t.path("partitions")) {
                Optional<Set<String>> racks = Optional.empty();
                if (p.has("racks") && !p.path("racks").isNull()) {
                    final Set<String> names = new HashSet<>();
                    p.path("racks").forEach(r -> names.add(r.asText()));
                    racks = Optional.of(names);
                }
                final boolean changelog = p.path("changelog").asBoolean(false);
                task.hasChangelog |= changelog;
                task.partitions.add(new Partition(new TopicPartition(p.path("topic").asText(), p.path("partition").asInt()),
                    p.path("source").asBoolean(false), changelog, racks));
            }
            s.tasks.put(task.id, task);
        }
        for (final JsonNode j : doc.path("clients")) {
            final Client client = new Client(new ProcessId(UUID.fromString(j.path("process_id").asText())));
            if (j.has("threads")) {
                for (int i = 1; i <= j.path("threads").asInt(); i++) {
                    client.consumers.add(client.id.id() + "-StreamThread-" + i);
                }
            } else {
                j.path("consumers").forEach(x -> client.consumers.add(x.asText()));
            }
            if (j.hasNonNull("rack")) {
                client.rack = Optional.of(j.path("rack").asText());
            }
            final Iterator<Map.Entry<String, JsonNode>> tagFields = j.path("tags").fields();
            while (tagFields.hasNext()) {
                final Map.Entry<String, JsonNode> e = tagFields.next();
                client.tags.put(e.getKey(), e.getValue().asText());
            }
            j.path("previous_active").forEach(x -> client.prevActive.add(taskId(x.asText())));
            j.path("previous_standby").forEach(x -> client.prevStandby.add(taskId(x.asText())));
            final Iterator<Map.Entry<String, JsonNode>> sums = j.path("task_offset_sums").fields();
            while (sums.hasNext()) {
                final Map.Entry<String, JsonNode> e = sums.next();
                final TaskId task = taskId(e.getKey());
                final long offset = e.getValue().asLong();
                client.offsetSums.put(task, offset);
                if (offset == LATEST_OFFSET) {
                    client.prevActive.add(task);
                } else if (!client.prevActive.contains(task)) {
                    client.prevStandby.add(task);
                }
            }
            for (final Task task : s.tasks.values()) {
                if (task.hasChangelog) {
                    client.lags.put(task.id, lag(task.endOffsetSum, client.offsetSums.getOrDefault(task.id, 0L)));
                }
            }
            s.clients.put(client.id, client);
        }
        final Iterator<Map.Entry<String, JsonNode>> current = doc.path("current_assignment").fields();
        while (current.hasNext()) {
            final Map.Entry<String, JsonNode> e = current.next();
            final Map<TaskId, Boolean> tasks = new TreeMap<>();
            e.getValue().path("active").forEach(x -> tasks.put(taskId(x.asText()), true));
            e.getValue().path("standby").forEach(x -> tasks.put(taskId(x.asText()), false));
            s.current.put(new ProcessId(UUID.fromString(e.getKey())), tasks);
        }
        return s;
    }

    /** The assignor's input, built fresh for every call (Kafka's assignors mutate it): a HashMap filled in
     * ProcessId order, as the leader hands it over (LegacySticky iterates it in HashMap order). */
    static Map<ProcessId, ClientState> clientStates(final Scenario s) {
        final Map<ProcessId, ClientState> states = new HashMap<>();
        for (final Client c : s.clients.values()) {
            states.put(c.id, new ClientState(c.prevActive, c.prevStandby, c.lags, c.tags, c.consumers.size(), c.id));
        }
        return states;
    }

    static Map<ProcessId, KafkaStreamsAssignment> currentAssignment(final Scenario s) {
        final Map<ProcessId, KafkaStreamsAssignment> result = new HashMap<>();
        for (final ProcessId pid : s.clients.keySet()) {
            final Set<AssignedTask> tasks = new HashSet<>();
            for (final Map.Entry<TaskId, Boolean> e : s.current.getOrDefault(pid, Collections.emptyMap()).entrySet()) {
                tasks.add(new AssignedTask(e.getKey(), e.getValue() ? AssignedTask.Type.ACTIVE : AssignedTask.Type.STANDBY));
            }
            result.put(pid, KafkaStreamsAssignment.of(pid, tasks));
        }
        return result;
    }

    /** One timed call: returns each client's (active, standby) task sets. */
    static Map<ProcessId, List<Set<TaskId>>> runOnce(final String assignor, final Scenario s) {
        final Map<ProcessId, List<Set<TaskId>>> out = new TreeMap<>();
        switch (assignor) {
            case "high_availability":
            case "legacy_sticky":
            case "fallback_prior": {
                final LegacyTaskAssignor internal = assignor.equals("high_availability") ? new HighAvailabilityTaskAssignor()
                    : assignor.equals("legacy_sticky") ? new LegacyStickyTaskAssignor() : new FallbackPriorTaskAssignor();
                final Map<ProcessId, ClientState> states = clientStates(s);
                final Set<TaskId> stateful = new HashSet<>();  // filled in TaskId order
                for (final Task t : s.tasks.values()) {
                    if (t.hasChangelog) {
                        stateful.add(t.id);
                    }
                }
                final Map<ProcessId, Map<String, Optional<String>>> racks = new HashMap<>();
                for (final Client c : s.clients.values()) {
                    final Map<String, Optional<String>> byConsumer = new HashMap<>();
                    for (final String consumer : c.consumers) {
                        byConsumer.put(consumer, c.rack);
                    }
                    racks.put(c.id, byConsumer);
                }
                final RackAwareTaskAssignor rack = new RackAwareTaskAssignor(Cluster.empty(), Collections.emptyMap(),
                    Collections.emptyMap(), Collections.emptyMap(), racks, null, s.configs, Time.SYSTEM);
                final Set<TaskId> all = new HashSet<>();
                all.addAll(s.tasks.keySet());
                internal.assign(states, all, stateful, rack, s.configs);
                for (final Map.Entry<ProcessId, ClientState> e : states.entrySet()) {
                    out.put(e.getKey(), Arrays.asList(new TreeSet<>(e.getValue().activeTasks()),
                        new TreeSet<>(e.getValue().standbyTasks())));
                }
                return out;
            }
            case "sticky": {
                final TaskAssignor.TaskAssignment result = new StickyTaskAssignor().assign(new State(s));
                collect(result.assignment(), out);
                return out;
            }
            case "optimize_active":
            case "optimize_standby": {
                final Map<ProcessId, KafkaStreamsAssignment> assignments = currentAssignment(s);
                final RackAwareOptimizationParams params = RackAwareOptimizationParams.of(new State(s)).forStatefulTasks();
                if (assignor.equals("optimize_active")) {
                    TaskAssignmentUtils.optimizeRackAwareActiveTasks(params, assignments);
                } else {
                    TaskAssignmentUtils.optimizeRackAwareStandbyTasks(params, assignments);
                }
                collect(assignments.values(), out);
                return out;
            }
            default:
                throw new IllegalArgumentException("unknown assignor " + assignor);
        }
    }

    static void collect(final Collection<KafkaStreamsAssignment> assignments, final Map<ProcessId, List<Set<TaskId>>> out) {
        for (final KafkaStreamsAssignment a : assignments) {
            final Set<TaskId> active = new TreeSet<>();
            final Set<TaskId> standby = new TreeSet<>();
            for (final AssignedTask t : a.tasks().values()) {
                (t.type() == AssignedTask.Type.ACTIVE ? active : standby).add(t.id());
            }
            out.put(a.processId(), Arrays.asList(active, standby));
        }
    }

    static void write(final Map<ProcessId, List<Set<TaskId>>> result, final String path) throws Exception {
        final ObjectNode clients = JSON.createObjectNode();
        for (final Map.Entry<ProcessId, List<Set<TaskId>>> e : result.entrySet()) {
            final ObjectNode entry = clients.putObject(e.getKey().id().toString());
            final ArrayNode active = entry.putArray("active");
            e.getValue().get(0).forEach(t -> active.add(t.toString()));
            final ArrayNode standby = entry.putArray("standby");
            e.getValue().get(1).forEach(t -> standby.add(t.toString()));
        }
        final ObjectNode doc = JSON.createObjectNode();
        doc.set("clients", clients);
        JSON.writeValue(new File(path), doc);
    }

    public static void main(final String[] args) throws Exception {
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            final String[] w = line.trim().split(" ");
            final ObjectNode answer = JSON.createObjectNode();
            try {
                final Scenario s = read(w[1]);
                final int warmups = Integer.parseInt(w[2]);
                final int repeats = Integer.parseInt(w[3]);
                Map<ProcessId, List<Set<TaskId>>> result = null;
                for (int i = 0; i < warmups; i++) {
                    result = runOnce(w[0], s);
                }
                final ArrayNode ms = answer.putArray("ms");
                for (int i = 0; i < repeats; i++) {
                    final long start = System.nanoTime();
                    result = runOnce(w[0], s);
                    ms.add((System.nanoTime() - start) / 1e6);
                }
                write(result, w[4]);
            } catch (final Exception | Error e) {
                answer.put("error", e.toString());
            }
            System.out.println(JSON.writeValueAsString(answer));
            System.out.flush();
        }
    }
}
