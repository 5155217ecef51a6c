import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import dev.taskassign.bridge.Json;
import dev.taskassign.bridge.TaskassignStreamsAssignor;
import org.apache.kafka.coordinator.group.api.streams.assignor.AssignmentConfigs;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentMetadata;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentState;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;

/**
 * Drives the bridge's broker-side streams assignor with a GroupSpec and TopologyDescriber built from a streams-group
 * file: {@code java StreamsHarness GROUP.json URL TIMEOUT_MS}. Prints its assignment, the broker's sticky one on the
 * same group, the fallback lines and the time assign() took, as one JSON object.
 */
public final class StreamsHarness {
    static final List<String> FALLBACKS = Collections.synchronizedList(new ArrayList<>());

    static final class Counting extends TaskassignStreamsAssignor {
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
        final Map<String, Object> configs = (Map<String, Object>) doc.getOrDefault("configs", Map.of());
        final int standbys = Integer.parseInt(String.valueOf(configs.getOrDefault("num.standby.replicas", "0")));
        final Map<String, Object[]> subtopologies = new LinkedHashMap<>();
        for (final Object o : (List<Object>) doc.get("subtopologies")) {
            final Map<String, Object> s = (Map<String, Object>) o;
            subtopologies.put((String) s.get("id"), new Object[] {((Long) s.get("partitions")).intValue(),
                Boolean.TRUE.equals(s.get("stateful"))});
        }
        final TopologyDescriber topology = new TopologyDescriber() {
            public List<String> subtopologies() { return new ArrayList<>(subtopologies.keySet()); }
            public int maxNumInputPartitions(final String id) {
                if (!subtopologies.containsKey(id)) {
                    throw new NoSuchElementException(id);
                }
                return (Integer) subtopologies.get(id)[0];
            }
            public boolean isStateful(final String id) { return (Boolean) subtopologies.get(id)[1]; }
        };
        final Map<String, MemberAssignmentMetadata> metadata = new LinkedHashMap<>();
        final Map<String, MemberAssignmentState> states = new LinkedHashMap<>();
        for (final Object o : (List<Object>) doc.get("members")) {
            final Map<String, Object> m = (Map<String, Object>) o;
            final String id = (String) m.get("memberId");
            final Map<String, String> tags = (Map<String, String>) (Map<?, ?>) m.getOrDefault("clientTags", Map.of());
            metadata.put(id, new MemberAssignmentMetadata() {
                public Optional<String> instanceId() { return Optional.ofNullable((String) m.get("instanceId")); }
                public Optional<String> rackId() { return Optional.ofNullable((String) m.get("rackId")); }
                public String processId() { return (String) m.get("processId"); }
                public Map<String, String> clientTags() { return tags; }
            });
            final Map<String, Set<Integer>> active = tasks(m.get("activeTasks"));
            final Map<String, Set<Integer>> standby = tasks(m.get("standbyTasks"));
            final Map<String, Set<Integer>> warmup = tasks(m.get("warmupTasks"));
            final Map<String, Map<Integer, Long>> offsets = offsets(m.get("taskOffsets"));
            final Map<String, Map<Integer, Long>> ends = offsets(m.get("taskEndOffsets"));
            states.put(id, new MemberAssignmentState() {
                public Map<String, Set<Integer>> activeTasks() { return active; }
                public Map<String, Set<Integer>> standbyTasks() { return standby; }
                public Map<String, Set<Integer>> warmupTasks() { return warmup; }
                public Map<String, Map<Integer, Long>> taskOffsets() { return offsets; }
                public Map<String, Map<Integer, Long>> taskEndOffsets() { return ends; }
            });
        }
        final AssignmentConfigs assignmentConfigs = new AssignmentConfigs() {
            public int numStandbyReplicas() { return standbys; }
            public List<String> rackAwareAssignmentTags() { return List.of(); }
        };
        final GroupSpec spec = new GroupSpec() {
            public Collection<String> memberIds() { return metadata.keySet(); }
            public MemberAssignmentMetadata memberMetadata(final String id) { return metadata.get(id); }
            public MemberAssignmentState memberAssignmentState(final String id) { return states.get(id); }
            public AssignmentConfigs configs() { return assignmentConfigs; }
        };
        final Map<String, Object> brokerConfigs = new HashMap<>();
        brokerConfigs.put("taskassign.url", args[1]);
        brokerConfigs.put("taskassign.timeout.ms", args[2]);
        final Counting bridge = new Counting();
        bridge.configure(brokerConfigs);
        final long start = System.nanoTime();
        final GroupAssignment result = bridge.assign(spec, topology);
        final long took = (System.nanoTime() - start) / 1_000_000;
        final Map<String, Object> out = new LinkedHashMap<>();
        out.put("result", describe(result));
        out.put("sticky", describe(new StickyTaskAssignor().assign(spec, topology)));
        out.put("fallbacks", new ArrayList<>(FALLBACKS));
        out.put("elapsed_ms", took);
        System.out.println(Json.write(out));
    }

    static Map<String, Object> describe(final GroupAssignment assignment) {
        final Map<String, Object> out = new TreeMap<>();
        for (final Map.Entry<String, MemberAssignment> e : assignment.members().entrySet()) {
            final Map<String, Object> m = new LinkedHashMap<>();
            m.put("activeTasks", sorted(e.getValue().activeTasks()));
            m.put("standbyTasks", sorted(e.getValue().standbyTasks()));
            out.put(e.getKey(), m);
        }
        return out;
    }

    static Map<String, Object> sorted(final Map<String, Set<Integer>> tasks) {
        final Map<String, Object> out = new TreeMap<>();
        for (final Map.Entry<String, Set<Integer>> e : tasks.entrySet()) {
            if (!e.getValue().isEmpty()) {
                out.put(e.getKey(), new ArrayList<>(new TreeSet<>(e.getValue())));
            }
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Set<Integer>> tasks(final Object value) {
        final Map<String, Set<Integer>> out = new HashMap<>();
        if (value instanceof Map) {
            for (final Map.Entry<String, Object> e : ((Map<String, Object>) value).entrySet()) {
                final Set<Integer> set = new TreeSet<>();
                for (final Object p : (List<Object>) e.getValue()) {
                    set.add(((Long) p).intValue());
                }
                out.put(e.getKey(), set);
            }
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Map<Integer, Long>> offsets(final Object value) {
        final Map<String, Map<Integer, Long>> out = new HashMap<>();
        if (value instanceof Map) {
            for (final Map.Entry<String, Object> e : ((Map<String, Object>) value).entrySet()) {
                final Map<Integer, Long> per = new HashMap<>();
                for (final Map.Entry<String, Object> p : ((Map<String, Object>) e.getValue()).entrySet()) {
                    per.put(Integer.parseInt(p.getKey()), (Long) p.getValue());
                }
                out.put(e.getKey(), per);
            }
        }
        return out;
    }
}
