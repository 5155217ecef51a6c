import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;

import dev.taskassign.bridge.Json;
import dev.taskassign.bridge.TaskassignTaskAssignor;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignor.TaskAssignment;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;
import org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor;
import org.apache.kafka.streams.state.HostInfo;

/**
 * Drives the bridge's KIP-924 assignor with a synthetic ApplicationState built from a bridge request file (the
 * document the assignor itself would post): {@code java BridgeHarness REQUEST.json URL TIMEOUT_MS}. Prints one
 * JSON object: the bridge's assignment, Kafka's StickyTaskAssignor's on the same state, the fallback lines the
 * bridge gave and the time assign() took.
 */
public final class BridgeHarness {
    static final List<String> FALLBACKS = Collections.synchronizedList(new ArrayList<>());

    static final class Counting extends TaskassignTaskAssignor {
        @Override
        protected void onFallback(final String reason) {
            FALLBACKS.add(reason);
            super.onFallback(reason);
        }
    }

    @SuppressWarnings("unchecked")
    public static void main(final String[] args) throws Exception {
        final Map<String, Object> doc = (Map<String, Object>) Json.read(
            new String(Files.readAllBytes(Paths.get(args[0])), StandardCharsets.UTF_8));
        final ApplicationState state = state(doc);
        final Map<String, Object> configs = new HashMap<>();
        configs.put("application.id", doc.get("application_id"));
        configs.put("taskassign.url", args[1]);
        configs.put("taskassign.timeout.ms", args[2]);
        final Counting bridge = new Counting();
        bridge.configure(configs);
        final long start = System.nanoTime();
        final TaskAssignment result = bridge.assign(state);
        final long took = (System.nanoTime() - start) / 1_000_000;
        final Map<String, Object> out = new LinkedHashMap<>();
        out.put("result", describe(result));
        out.put("sticky", describe(new StickyTaskAssignor().assign(state)));
        out.put("fallbacks", new ArrayList<>(FALLBACKS));
        out.put("elapsed_ms", took);
        System.out.println(Json.write(out));
    }

    static Map<String, Object> describe(final TaskAssignment assignment) {
        final Map<String, Object> out = new TreeMap<>();
        for (final KafkaStreamsAssignment a : assignment.assignment()) {
            final List<String> active = new ArrayList<>();
            final List<String> standby = new ArrayList<>();
            for (final KafkaStreamsAssignment.AssignedTask t : new TreeMap<>(a.tasks()).values()) {
                (t.type() == KafkaStreamsAssignment.AssignedTask.Type.ACTIVE ? active : standby).add(t.id().toString());
            }
            final Map<String, Object> c = new LinkedHashMap<>();
            c.put("active", active);
            c.put("standby", standby);
            c.put("followup_rebalance_deadline_ms", a.followupRebalanceDeadline().map(i -> (Object) i.toEpochMilli()).orElse(null));
            out.put(a.processId().id().toString(), c);
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    static ApplicationState state(final Map<String, Object> doc) {
        final Map<String, Object> ac = (Map<String, Object>) doc.get("assignment_configs");
        final AssignmentConfigs configs = new AssignmentConfigs(
            (Long) ac.get("acceptable.recovery.lag"), ((Long) ac.get("max.warmup.replicas")).intValue(),
            ((Long) ac.get("num.standby.replicas")).intValue(), (Long) ac.get("probing.rebalance.interval.ms"),
            (List<String>) ac.get("rack.aware.assignment.tags"),
            ac.get("rack.aware.assignment.traffic_cost") == null ? OptionalInt.empty()
                : OptionalInt.of(((Long) ac.get("rack.aware.assignment.traffic_cost")).intValue()),
            ac.get("rack.aware.assignment.non_overlap_cost") == null ? OptionalInt.empty()
                : OptionalInt.of(((Long) ac.get("rack.aware.assignment.non_overlap_cost")).intValue()),
            (String) ac.get("rack.aware.assignment.strategy"));
        final Map<TaskId, TaskInfo> tasks = new TreeMap<>();
        final Map<TaskId, Long> maxLag = new TreeMap<>();
        for (final Object o : (List<Object>) doc.get("tasks")) {
            final Map<String, Object> t = (Map<String, Object>) o;
            final TaskId id = TaskId.parse((String) t.get("id"));
            if (t.get("max_lag") != null) {
                maxLag.put(id, (Long) t.get("max_lag"));
            }
            final Set<String> stores = new TreeSet<>((List<String>) t.get("stores"));
            final Set<TaskTopicPartition> parts = new java.util.HashSet<>();
            for (final Object po : (List<Object>) t.get("partitions")) {
                final Map<String, Object> p = (Map<String, Object>) po;
                final TopicPartition tp = new TopicPartition((String) p.get("topic"), ((Long) p.get("partition")).intValue());
                final boolean source = (Boolean) p.get("source");
                final boolean changelog = (Boolean) p.get("changelog");
                final Optional<Set<String>> racks = p.get("racks") == null ? Optional.empty()
                    : Optional.of(new TreeSet<>((List<String>) p.get("racks")));
                parts.add(new TaskTopicPartition() {
                    public TopicPartition topicPartition() { return tp; }
                    public boolean isSource() { return source; }
                    public boolean isChangelog() { return changelog; }
                    public Optional<Set<String>> rackIds() { return racks; }
                });
            }
            final boolean stateful = (Boolean) t.get("stateful");
            tasks.put(id, new TaskInfo() {
                public TaskId id() { return id; }
                public boolean isStateful() { return stateful; }
                public Set<String> stateStoreNames() { return stores; }
                public Set<TaskTopicPartition> topicPartitions() { return parts; }
            });
        }
        final Map<ProcessId, KafkaStreamsState> clients = new TreeMap<>();
        for (final Object o : (List<Object>) doc.get("clients")) {
            final Map<String, Object> c = (Map<String, Object>) o;
            final ProcessId pid = new ProcessId(UUID.fromString((String) c.get("process_id")));
            final int threads = ((Long) c.get("threads")).intValue();
            final SortedSet<String> consumers = new TreeSet<>((List<String>) c.get("consumers"));
            final SortedSet<TaskId> prevActive = ids((List<String>) c.get("previous_active"));
            final SortedSet<TaskId> prevStandby = ids((List<String>) c.get("previous_standby"));
            // the request lists only the lags that differ from the task's largest (max_lag): expand them back
            final Map<TaskId, Long> lags = new TreeMap<>(maxLag);
            for (final Map.Entry<String, Object> e : ((Map<String, Object>) c.get("lags")).entrySet()) {
                lags.put(TaskId.parse(e.getKey()), (Long) e.getValue());
            }
            final Optional<String> rack = Optional.ofNullable((String) c.get("rack"));
            final Map<String, String> tags = (Map<String, String>) (Map<?, ?>) c.get("tags");
            final Optional<HostInfo> host = c.get("host") == null ? Optional.empty()
                : Optional.of(HostInfo.buildFromEndpoint((String) c.get("host")));
            clients.put(pid, new KafkaStreamsState() {
                public ProcessId processId() { return pid; }
                public int numProcessingThreads() { return threads; }
                public SortedSet<String> consumerClientIds() { return consumers; }
                public SortedSet<TaskId> previousActiveTasks() { return prevActive; }
                public SortedSet<TaskId> previousStandbyTasks() { return prevStandby; }
                public long lagFor(final TaskId task) {
                    final Long lag = lags.get(task);
                    if (lag == null) {
                        throw new IllegalStateException("Tried to lookup lag for unknown task " + task);
                    }
                    return lag;
                }
                public SortedSet<TaskId> prevTasksByLag(final String consumer) { return new TreeSet<>(); }
                public Map<TaskId, Long> statefulTasksToLagSums() { return lags; }
                public Optional<HostInfo> hostInfo() { return host; }
                public Map<String, String> clientTags() { return tags; }
                public Optional<String> rackId() { return rack; }
            });
        }
        return new ApplicationState() {
            public Map<ProcessId, KafkaStreamsState> kafkaStreamsStates(final boolean computeTaskLags) { return clients; }
            public AssignmentConfigs assignmentConfigs() { return configs; }
            public Map<TaskId, TaskInfo> allTasks() { return tasks; }
        };
    }

    static SortedSet<TaskId> ids(final List<String> names) {
        final SortedSet<TaskId> out = new TreeSet<>();
        for (final String n : names) {
            out.add(TaskId.parse(n));
        }
        return out;
    }
}
