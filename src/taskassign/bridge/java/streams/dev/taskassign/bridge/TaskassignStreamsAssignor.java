package dev.taskassign.bridge;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.common.Configurable;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentMetadata;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentState;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignor;
import org.apache.kafka.coordinator.group.api.streams.assignor.TaskAssignorException;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A broker-side streams group assignor (Kafka 4.4, KIP-1357) that asks a {@code taskassign serve} service.
 *
 * <p>Register it on every broker with {@code group.streams.assignors=sticky,dev.taskassign.bridge.TaskassignStreamsAssignor}
 * and the {@code taskassign.*} keys in server.properties (the coordinator passes the broker's configs to
 * {@link #configure}); a group chooses it with the group config {@code streams.assignor.name=taskassign}.
 *
 * <p>The coordinator keeps one instance for every group and calls {@link #assign} on its own threads, so this
 * class is thread-safe (configuration is immutable once set; the HTTP client is shared and thread-safe) and
 * never blocks longer than {@code taskassign.timeout.ms} (default 200). The broker does not validate what an
 * assignor returns and fails every heartbeat of the group when an assignor throws, so the answer is validated
 * here (every task of every subtopology active exactly once, no unknown member, no task twice on one member,
 * no standby on the process of its active) and every problem, including any Throwable, falls back to the
 * broker's own {@code sticky} assignor for that assignment, with one WARN line saying why. The broker also
 * creates throwaway instances (to read {@link #name()}), so the constructor does nothing.
 */
public class TaskassignStreamsAssignor implements TaskAssignor, Configurable {
    private static final Logger LOG = LoggerFactory.getLogger(TaskassignStreamsAssignor.class);
    public static final String NAME = "taskassign";
    public static final String PATH = "/v1/streams-assign";
    public static final long DEFAULT_TIMEOUT_MS = 200;
    public static final String STREAMS_GROUP_FORMAT = "taskassign/streams-group/v1";

    private volatile BridgeClient client;
    private volatile String configProblem = "not configured (the broker did not call configure)";
    private final AtomicLong fallbacks = new AtomicLong();

    public TaskassignStreamsAssignor() {
        // cheap on purpose: the broker builds instances just to read name()
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public void configure(final Map<String, ?> configs) {
        try {
            this.client = BridgeClient.fromConfigs(configs, PATH, DEFAULT_TIMEOUT_MS);
            this.configProblem = null;
        } catch (final Throwable e) {
            // never fail the broker's start: every assignment falls back and says why
            this.client = null;
            this.configProblem = e.getMessage();
        }
    }

    /** How many assignments fell back since the broker started (for tests and JMX-less inspection). */
    public long fallbacks() {
        return fallbacks.get();
    }

    @Override
    public GroupAssignment assign(final GroupSpec groupSpec, final TopologyDescriber topologyDescriber)
        throws TaskAssignorException {
        final long start = System.nanoTime();
        try {
            final BridgeClient c = client;
            if (c == null) {
                throw new BridgeException(configProblem);
            }
            final Map<String, Integer> partitions = new TreeMap<>();
            final Map<String, Object> request = request(groupSpec, topologyDescriber, partitions);
            final Map<String, Object> answer = c.post(Json.write(request), start);
            return toGroupAssignment(groupSpec, partitions, topologyDescriber, answer);
        } catch (final Throwable e) {
            fallbacks.incrementAndGet();
            final String reason = e instanceof BridgeException ? e.getMessage()
                : e.getClass().getName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
            onFallback(String.valueOf(reason).replace('\n', ' '));
            if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
                throw (VirtualMachineError) e;
            }
            return fallback(groupSpec, topologyDescriber);
        }
    }

    /** The one line saying why this assignment falls back (a subclass may also count it). */
    protected void onFallback(final String reason) {
        LOG.warn("taskassign: falling back to the broker's sticky assignor for this streams group assignment: {}", reason);
    }

    /** The broker's own assignor, exactly as a group without streams.assignor.name would get it. */
    protected GroupAssignment fallback(final GroupSpec groupSpec, final TopologyDescriber topologyDescriber) {
        return new StickyTaskAssignor().assign(groupSpec, topologyDescriber);
    }

    // --- the request: taskassign's streams-group document (camelCase keys as GroupSpec names them) ---------

    static Map<String, Object> request(final GroupSpec spec, final TopologyDescriber topology,
                                       final Map<String, Integer> partitionsOut) {
        final Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("format", STREAMS_GROUP_FORMAT);
        doc.put("name", "streams-group");
        doc.put("assignor", "sticky");
        final Map<String, Object> configs = new TreeMap<>();
        configs.put("num.standby.replicas", Integer.toString(spec.configs().numStandbyReplicas()));
        final List<String> tags = spec.configs().rackAwareAssignmentTags();
        if (tags != null && !tags.isEmpty()) {
            configs.put("rack.aware.assignment.tags", String.join(",", tags));
        }
        doc.put("configs", configs);
        final List<Object> subtopologies = new ArrayList<>();
        for (final String id : topology.subtopologies()) {
            final int n = topology.maxNumInputPartitions(id);
            partitionsOut.put(id, n);
            final Map<String, Object> s = new LinkedHashMap<>();
            s.put("id", id);
            s.put("partitions", n);
            s.put("stateful", topology.isStateful(id));
            subtopologies.add(s);
        }
        doc.put("subtopologies", subtopologies);
        final List<Object> members = new ArrayList<>();
        for (final String memberId : spec.memberIds()) {
            final MemberAssignmentMetadata meta = spec.memberMetadata(memberId);
            final MemberAssignmentState state = spec.memberAssignmentState(memberId);
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("memberId", memberId);
            m.put("processId", meta.processId());
            m.put("rackId", meta.rackId().orElse(null));
            m.put("instanceId", meta.instanceId().orElse(null));
            m.put("clientTags", new TreeMap<>(meta.clientTags()));
            m.put("activeTasks", tasks(state.activeTasks()));
            m.put("standbyTasks", tasks(state.standbyTasks()));
            m.put("warmupTasks", tasks(state.warmupTasks()));
            m.put("taskOffsets", offsets(state.taskOffsets()));
            m.put("taskEndOffsets", offsets(state.taskEndOffsets()));
            members.add(m);
        }
        doc.put("members", members);
        return doc;
    }

    private static Map<String, Object> tasks(final Map<String, Set<Integer>> tasks) {
        final Map<String, Object> out = new TreeMap<>();
        if (tasks != null) {
            for (final Map.Entry<String, Set<Integer>> e : tasks.entrySet()) {
                out.put(e.getKey(), new ArrayList<>(new TreeSet<>(e.getValue())));
            }
        }
        return out;
    }

    private static Map<String, Object> offsets(final Map<String, Map<Integer, Long>> offsets) {
        final Map<String, Object> out = new TreeMap<>();
        if (offsets != null) {
            for (final Map.Entry<String, Map<Integer, Long>> e : offsets.entrySet()) {
                final Map<String, Object> per = new TreeMap<>();
                for (final Map.Entry<Integer, Long> p : new TreeMap<>(e.getValue()).entrySet()) {
                    per.put(Integer.toString(p.getKey()), p.getValue());
                }
                out.put(e.getKey(), per);
            }
        }
        return out;
    }

    // --- the answer: {"members": {memberId: {"activeTasks": {...}, "standbyTasks": {...}}}} --------------

    @SuppressWarnings("unchecked")
    static GroupAssignment toGroupAssignment(final GroupSpec spec, final Map<String, Integer> partitions,
                                             final TopologyDescriber topology, final Map<String, Object> answer) {
        final Object membersValue = answer.get("members");
        if (!(membersValue instanceof Map)) {
            throw new BridgeException("invalid answer: no 'members' object");
        }
        final Collection<String> memberIds = spec.memberIds();
        final Set<String> known = new HashSet<>(memberIds);
        final Map<String, String> activeOwner = new HashMap<>();
        final Map<String, Set<String>> processTasks = new HashMap<>();
        final Map<String, MemberAssignment> result = new HashMap<>();
        final Map<String, Object> members = (Map<String, Object>) membersValue;
        // actives first, so that a standby can be checked against its active's process
        final Map<String, Map<String, Set<Integer>>> actives = new HashMap<>();
        for (final Map.Entry<String, Object> e : members.entrySet()) {
            if (!known.contains(e.getKey())) {
                throw new BridgeException("invalid answer: unknown member " + e.getKey());
            }
            if (!(e.getValue() instanceof Map)) {
                throw new BridgeException("invalid answer: member " + e.getKey() + " is not an object");
            }
            final Map<String, Object> entry = (Map<String, Object>) e.getValue();
            final String process = spec.memberMetadata(e.getKey()).processId();
            final Map<String, Set<Integer>> active = taskMap(entry.get("activeTasks"), partitions, e.getKey());
            for (final Map.Entry<String, Set<Integer>> t : active.entrySet()) {
                for (final Integer p : t.getValue()) {
                    final String task = t.getKey() + "_" + p;
                    final String other = activeOwner.put(task, e.getKey());
                    if (other != null) {
                        throw new BridgeException("invalid answer: task " + task + " active on " + other + " and " + e.getKey());
                    }
                    processTasks.computeIfAbsent(process, k -> new HashSet<>()).add(task);
                }
            }
            actives.put(e.getKey(), active);
        }
        for (final Map.Entry<String, Integer> s : partitions.entrySet()) {
            for (int p = 0; p < s.getValue(); p++) {
                if (!activeOwner.containsKey(s.getKey() + "_" + p)) {
                    throw new BridgeException("invalid answer: task " + s.getKey() + "_" + p + " has no active owner");
                }
            }
        }
        for (final Map.Entry<String, Object> e : members.entrySet()) {
            final Map<String, Object> entry = (Map<String, Object>) e.getValue();
            final String process = spec.memberMetadata(e.getKey()).processId();
            final Map<String, Set<Integer>> standby = taskMap(entry.get("standbyTasks"), partitions, e.getKey());
            for (final Map.Entry<String, Set<Integer>> t : standby.entrySet()) {
                if (!topology.isStateful(t.getKey())) {
                    throw new BridgeException("invalid answer: a standby of stateless subtopology " + t.getKey());
                }
                for (final Integer p : t.getValue()) {
                    final String task = t.getKey() + "_" + p;
                    if (!processTasks.computeIfAbsent(process, k -> new HashSet<>()).add(task)) {
                        throw new BridgeException("invalid answer: task " + task + " twice on process " + process);
                    }
                }
            }
            result.put(e.getKey(), new MemberAssignment(actives.get(e.getKey()), standby));
        }
        for (final String memberId : memberIds) {
            result.computeIfAbsent(memberId, m -> new MemberAssignment(new HashMap<>(), new HashMap<>()));
        }
        return new GroupAssignment(result);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Set<Integer>> taskMap(final Object value, final Map<String, Integer> partitions,
                                                     final String member) {
        final Map<String, Set<Integer>> out = new HashMap<>();
        if (value == null) {
            return out;
        }
        if (!(value instanceof Map)) {
            throw new BridgeException("invalid answer: tasks of " + member + " are not an object");
        }
        for (final Map.Entry<String, Object> e : ((Map<String, Object>) value).entrySet()) {
            final Integer n = partitions.get(e.getKey());
            if (n == null) {
                throw new BridgeException("invalid answer: unknown subtopology " + e.getKey());
            }
            if (!(e.getValue() instanceof List)) {
                throw new BridgeException("invalid answer: partitions of " + e.getKey() + " are not a list");
            }
            final Set<Integer> set = new HashSet<>();
            for (final Object p : (List<Object>) e.getValue()) {
                if (!(p instanceof Long) || (Long) p < 0 || (Long) p >= n) {
                    throw new BridgeException("invalid answer: unknown task " + e.getKey() + "_" + p);
                }
                if (!set.add(((Long) p).intValue())) {
                    throw new BridgeException("invalid answer: task " + e.getKey() + "_" + p + " twice on " + member);
                }
            }
            if (!set.isEmpty()) {
                out.put(e.getKey(), set);
            }
        }
        return out;
    }
}
