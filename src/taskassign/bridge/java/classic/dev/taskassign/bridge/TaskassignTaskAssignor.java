package dev.taskassign.bridge;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.ApplicationState;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsAssignment.AssignedTask;
import org.apache.kafka.streams.processor.assignment.KafkaStreamsState;
import org.apache.kafka.streams.processor.assignment.ProcessId;
import org.apache.kafka.streams.processor.assignment.TaskAssignor;
import org.apache.kafka.streams.processor.assignment.TaskInfo;
import org.apache.kafka.streams.processor.assignment.TaskTopicPartition;
import org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A KIP-924 {@code task.assignor.class} (Kafka Streams 3.8+, classic rebalance protocol) that asks a
 * {@code taskassign serve} service for the assignment.
 *
 * <p>At every rebalance the group leader serialises KIP-924's {@link ApplicationState} (tasks with their
 * partitions and racks, clients with their threads, previous tasks, lags, rack, tags, the assignment configs
 * and the application's configs, secrets left out) as JSON and POSTs it to {@code taskassign.url}/v1/assign,
 * waiting at most {@code taskassign.timeout.ms} (default 500). The answer is validated (every task active
 * exactly once, no unknown process or task, no task twice on one client, which also keeps a standby off its
 * active's client) and applied. On a timeout, an unreachable service, an HTTP error, an invalid answer or
 * any Throwable, this rebalance is assigned by Kafka's own KIP-924 {@link StickyTaskAssignor} instead and one
 * WARN line says why: the application never fails a rebalance because of taskassign.
 *
 * <p>Kafka creates a new instance for every rebalance (StreamsPartitionAssignor's supplier) and calls
 * {@link #configure} with the application's configs first.
 */
public class TaskassignTaskAssignor implements TaskAssignor {
    private static final Logger LOG = LoggerFactory.getLogger(TaskassignTaskAssignor.class);
    public static final String PATH = "/v1/assign";
    public static final long DEFAULT_TIMEOUT_MS = 500;
    public static final String REQUEST_FORMAT = "taskassign/bridge-request/v1";
    /** Config keys whose values never leave the application (passwords, keys, JAAS, tokens). */
    private static final String[] SECRET_MARKERS = {"password", "secret", "jaas", "token", "key", "credential"};

    private Map<String, ?> configs = Map.of();
    private String applicationId = "";

    @Override
    public void configure(final Map<String, ?> configs) {
        this.configs = configs == null ? Map.of() : configs;
        final Object id = this.configs.get("application.id");
        this.applicationId = id == null ? "" : id.toString();
    }

    @Override
    public TaskAssignment assign(final ApplicationState applicationState) {
        final long start = System.nanoTime();
        try {
            final BridgeClient client = BridgeClient.fromConfigs(configs, PATH, DEFAULT_TIMEOUT_MS);
            final String request = Json.write(request(applicationState));
            final Map<String, Object> answer = client.post(request, start);
            final TaskAssignment assignment = toTaskAssignment(applicationState, answer);
            LOG.info("taskassign: applied the service's assignment for application {} (decision {}, assignor {}, {}) in {} ms",
                applicationId, answer.get("decision_id"), answer.get("assignor"), answer.get("source"),
                (System.nanoTime() - start) / 1_000_000);
            return assignment;
        } catch (final Throwable e) {
            final String reason = e instanceof BridgeException ? e.getMessage()
                : e.getClass().getName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
            onFallback(reason.replace('\n', ' '));
            if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
                throw (VirtualMachineError) e;
            }
            return fallback(applicationState);
        }
    }

    /** The one line saying why this rebalance falls back (a subclass may also count it). */
    protected void onFallback(final String reason) {
        LOG.warn("taskassign: falling back to Kafka's StickyTaskAssignor for this rebalance of application {}: {}",
            applicationId, reason);
    }

    /** Kafka's own KIP-924 assignor (org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor). */
    protected TaskAssignment fallback(final ApplicationState applicationState) {
        final StickyTaskAssignor sticky = new StickyTaskAssignor();
        sticky.configure(configs);
        return sticky.assign(applicationState);
    }

    // --- the request -------------------------------------------------------------------------------------

    Map<String, Object> request(final ApplicationState state) {
        final Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("format", REQUEST_FORMAT);
        doc.put("protocol", "classic");
        doc.put("application_id", applicationId);
        doc.put("now_ms", System.currentTimeMillis());
        doc.put("assignment_configs", assignmentConfigs(state.assignmentConfigs()));
        doc.put("configs", safeConfigs(configs));
        final Map<TaskId, TaskInfo> allTasks = new TreeMap<>(state.allTasks());
        Map<ProcessId, KafkaStreamsState> clients;
        boolean lags = true;
        try {
            clients = state.kafkaStreamsStates(true);
        } catch (final RuntimeException e) {
            clients = state.kafkaStreamsStates(false);
            lags = false;
        }
        final Collection<KafkaStreamsState> sorted = new TreeMap<>(clients).values();
        // Every client without the task's state has the same lag, the task's whole changelog: it is sent once per
        // task ("max_lag", the largest lag) and per client only the lags that differ from it (10^4 tasks on 10^2
        // clients: 10^4 + a few 10^4 numbers instead of 10^6).
        final Map<TaskId, Map<KafkaStreamsState, Long>> lagsByTask = new HashMap<>();
        final Map<TaskId, Long> maxLag = new HashMap<>();
        if (lags) {
            for (final KafkaStreamsState client : sorted) {
                for (final TaskId id : allTasks.keySet()) {
                    final long lag;
                    try {
                        lag = client.lagFor(id);
                    } catch (final RuntimeException notStateful) {
                        continue; // Kafka keeps lags for tasks with changelogs only
                    }
                    lagsByTask.computeIfAbsent(id, k -> new HashMap<>()).put(client, lag);
                    maxLag.merge(id, lag, Math::max);
                }
            }
        }
        final List<Object> tasks = new ArrayList<>();
        for (final TaskInfo info : allTasks.values()) {
            final Map<String, Object> t = task(info);
            if (maxLag.containsKey(info.id())) {
                t.put("max_lag", maxLag.get(info.id()));
            }
            tasks.add(t);
        }
        doc.put("tasks", tasks);
        final List<Object> list = new ArrayList<>();
        for (final KafkaStreamsState client : sorted) {
            final Map<String, Object> own = new TreeMap<>();
            for (final Map.Entry<TaskId, Map<KafkaStreamsState, Long>> e : lagsByTask.entrySet()) {
                final Long lag = e.getValue().get(client);
                if (lag != null && lag.longValue() != maxLag.get(e.getKey()).longValue()) {
                    own.put(e.getKey().toString(), lag);
                }
            }
            list.add(client(client, own));
        }
        doc.put("lags_available", lags);
        doc.put("clients", list);
        return doc;
    }

    private static Map<String, Object> assignmentConfigs(final AssignmentConfigs c) {
        final Map<String, Object> m = new LinkedHashMap<>();
        m.put("acceptable.recovery.lag", c.acceptableRecoveryLag());
        m.put("max.warmup.replicas", c.maxWarmupReplicas());
        m.put("num.standby.replicas", c.numStandbyReplicas());
        m.put("probing.rebalance.interval.ms", c.probingRebalanceIntervalMs());
        m.put("rack.aware.assignment.tags", new ArrayList<>(c.rackAwareAssignmentTags()));
        m.put("rack.aware.assignment.traffic_cost",
            c.rackAwareTrafficCost().isPresent() ? (Object) c.rackAwareTrafficCost().getAsInt() : null);
        m.put("rack.aware.assignment.non_overlap_cost",
            c.rackAwareNonOverlapCost().isPresent() ? (Object) c.rackAwareNonOverlapCost().getAsInt() : null);
        m.put("rack.aware.assignment.strategy", c.rackAwareAssignmentStrategy());
        return m;
    }

    static Map<String, Object> safeConfigs(final Map<String, ?> configs) {
        final Map<String, Object> m = new TreeMap<>();
        for (final Map.Entry<String, ?> e : configs.entrySet()) {
            final String key = e.getKey().toLowerCase(Locale.ROOT);
            boolean secret = false;
            for (final String marker : SECRET_MARKERS) {
                secret |= key.contains(marker) && !key.startsWith("taskassign.timeout");
            }
            final Object v = e.getValue();
            if (!secret && (v instanceof String || v instanceof Number || v instanceof Boolean)) {
                m.put(e.getKey(), v.toString());
            }
        }
        return m;
    }

    private static Map<String, Object> task(final TaskInfo info) {
        final Map<String, Object> t = new LinkedHashMap<>();
        t.put("id", info.id().toString());
        t.put("stateful", info.isStateful());
        t.put("stores", new ArrayList<>(new java.util.TreeSet<>(info.stateStoreNames())));
        final List<Object> parts = new ArrayList<>();
        final Map<String, TaskTopicPartition> sorted = new TreeMap<>();
        for (final TaskTopicPartition p : info.topicPartitions()) {
            final TopicPartition tp = p.topicPartition();
            sorted.put(tp.topic() + "\u0000" + String.format("%011d", tp.partition()), p);
        }
        for (final TaskTopicPartition p : sorted.values()) {
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("topic", p.topicPartition().topic());
            m.put("partition", p.topicPartition().partition());
            m.put("source", p.isSource());
            m.put("changelog", p.isChangelog());
            final Optional<Set<String>> racks = p.rackIds();
            m.put("racks", racks.isPresent() ? new ArrayList<>(new java.util.TreeSet<>(racks.get())) : null);
            parts.add(m);
        }
        t.put("partitions", parts);
        return t;
    }

    private static Map<String, Object> client(final KafkaStreamsState client, final Map<String, Object> lags) {
        final Map<String, Object> c = new LinkedHashMap<>();
        c.put("process_id", client.processId().id().toString());
        c.put("threads", client.numProcessingThreads());
        c.put("consumers", new ArrayList<>(client.consumerClientIds()));
        c.put("previous_active", names(client.previousActiveTasks()));
        c.put("previous_standby", names(client.previousStandbyTasks()));
        c.put("lags", lags);
        c.put("rack", client.rackId().orElse(null));
        c.put("tags", new TreeMap<>(client.clientTags()));
        c.put("host", client.hostInfo().map(h -> h.host() + ":" + h.port()).orElse(null));
        return c;
    }

    private static List<Object> names(final Collection<TaskId> ids) {
        final List<Object> out = new ArrayList<>();
        for (final TaskId id : ids) {
            out.add(id.toString());
        }
        return out;
    }

    // --- the answer --------------------------------------------------------------------------------------

    /**
     * The answer as a TaskAssignment, or a BridgeException naming the first problem: every task active exactly
     * once, no unknown process or task, no task twice on one client (so no standby beside its active). A client
     * the answer leaves out gets no tasks.
     */
    @SuppressWarnings("unchecked")
    static TaskAssignment toTaskAssignment(final ApplicationState state, final Map<String, Object> answer) {
        final Object clientsValue = answer.get("clients");
        if (!(clientsValue instanceof Map)) {
            throw new BridgeException("invalid answer: no 'clients' object");
        }
        final Map<String, TaskId> taskIds = new HashMap<>();
        for (final TaskId id : state.allTasks().keySet()) {
            taskIds.put(id.toString(), id);
        }
        final Map<String, ProcessId> processIds = new HashMap<>();
        for (final ProcessId pid : state.kafkaStreamsStates(false).keySet()) {
            processIds.put(pid.id().toString(), pid);
        }
        final Map<TaskId, String> activeOwner = new HashMap<>();
        final Map<ProcessId, KafkaStreamsAssignment> result = new LinkedHashMap<>();
        for (final Map.Entry<String, Object> e : ((Map<String, Object>) clientsValue).entrySet()) {
            final ProcessId pid = processIds.get(e.getKey());
            if (pid == null) {
                throw new BridgeException("invalid answer: unknown process " + e.getKey());
            }
            if (!(e.getValue() instanceof Map)) {
                throw new BridgeException("invalid answer: client " + e.getKey() + " is not an object");
            }
            final Map<String, Object> entry = (Map<String, Object>) e.getValue();
            final Set<TaskId> seen = new HashSet<>();
            final Set<AssignedTask> assigned = new HashSet<>();
            for (final String kind : new String[] {"active", "standby"}) {
                final Object list = entry.getOrDefault(kind, List.of());
                if (!(list instanceof List)) {
                    throw new BridgeException("invalid answer: " + kind + " of " + e.getKey() + " is not a list");
                }
                for (final Object name : (List<Object>) list) {
                    final TaskId id = taskIds.get(String.valueOf(name));
                    if (id == null) {
                        throw new BridgeException("invalid answer: unknown task " + name);
                    }
                    if (!seen.add(id)) {
                        throw new BridgeException("invalid answer: task " + id + " twice on client " + e.getKey());
                    }
                    if (kind.equals("active")) {
                        final String other = activeOwner.put(id, e.getKey());
                        if (other != null) {
                            throw new BridgeException("invalid answer: task " + id + " active on " + other + " and " + e.getKey());
                        }
                        assigned.add(new AssignedTask(id, AssignedTask.Type.ACTIVE));
                    } else {
                        assigned.add(new AssignedTask(id, AssignedTask.Type.STANDBY));
                    }
                }
            }
            KafkaStreamsAssignment a = KafkaStreamsAssignment.of(pid, assigned);
            final Object deadline = entry.get("followup_rebalance_deadline_ms");
            if (deadline instanceof Long) {
                a = a.withFollowupRebalance(Instant.ofEpochMilli((Long) deadline));
            } else if (deadline != null) {
                throw new BridgeException("invalid answer: followup_rebalance_deadline_ms of " + e.getKey() + " is not an integer");
            }
            if (result.put(pid, a) != null) {
                throw new BridgeException("invalid answer: client " + e.getKey() + " twice");
            }
        }
        for (final String task : taskIds.keySet()) {
            if (!activeOwner.containsKey(taskIds.get(task))) {
                throw new BridgeException("invalid answer: task " + task + " has no active owner");
            }
        }
        for (final ProcessId pid : processIds.values()) {
            result.computeIfAbsent(pid, p -> KafkaStreamsAssignment.of(p, Set.of()));
        }
        return new TaskAssignment(result.values());
    }
}
