import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.coordinator.group.api.streams.assignor.AssignmentConfigs;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentMetadata;
import org.apache.kafka.coordinator.group.api.streams.assignor.MemberAssignmentState;
import org.apache.kafka.coordinator.group.api.streams.assignor.TopologyDescriber;
import org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor;

/**
 * Kafka 4.4's broker-side streams {@code StickyTaskAssignor} (the API of group-coordinator-api) on streams-group files,
 * for benchmarks/bench_streams_java.py. One request per stdin line, {@code GROUP.json WARMUP REPEAT OUTPUT.json}: the
 * group is read once (members put into a {@code HashMap} in file order, as the coordinator does), {@code assign} is
 * called WARMUP times untimed and REPEAT times timed; the answer is one JSON line with each timed call's wall time
 * and CPU time (the calling thread's), the whole JVM's CPU time over the timed calls (GC and JIT threads
 * included; the clock it reads has a resolution of 10 ms, so only its total is kept), and the last call's assignment
 * is written to OUTPUT.json (members, subtopologies and partitions sorted).
 */
public final class StreamsSticky {
    static final ObjectMapper JSON = new ObjectMapper();

    public static void main(final String[] args) throws Exception {
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        final com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        String line;
        while ((line = in.readLine()) != null) {
            final String[] request = line.trim().split(" ");
            final ObjectNode answer = JSON.createObjectNode();
            try {
                final JsonNode doc = JSON.readTree(new File(request[0]));
                final int warmup = Integer.parseInt(request[1]);
                final int repeat = Integer.parseInt(request[2]);
                final GroupSpec spec = spec(doc);
                final TopologyDescriber topology = topology(doc);
                final StickyTaskAssignor assignor = new StickyTaskAssignor();
                GroupAssignment result = null;
                for (int i = 0; i < warmup; i++) {
                    result = assignor.assign(spec, topology);
                }
                final List<Double> wall = new ArrayList<>(), cpu = new ArrayList<>();
                final long block = os.getProcessCpuTime();
                for (int i = 0; i < repeat; i++) {
                    final long t0 = System.nanoTime(), c0 = threads.getCurrentThreadCpuTime();
                    result = assignor.assign(spec, topology);
                    final long t1 = System.nanoTime(), c1 = threads.getCurrentThreadCpuTime();
                    wall.add((t1 - t0) / 1e6);
                    cpu.add((c1 - c0) / 1e6);
                }
                final double processCpu = (os.getProcessCpuTime() - block) / 1e6;
                JSON.writeValue(new File(request[3]), describe(result));
                answer.set("wall_ms", JSON.valueToTree(wall));
                answer.set("thread_cpu_ms", JSON.valueToTree(cpu));
                answer.put("process_cpu_total_ms", processCpu);
            } catch (final Exception e) {
                answer.put("error", e.toString());
            }
            System.out.println(JSON.writeValueAsString(answer));
            System.out.flush();
        }
    }

    static TopologyDescriber topology(final JsonNode doc) {
        final Map<String, int[]> subtopologies = new HashMap<>();
        final List<String> order = new ArrayList<>();
        for (final JsonNode s : doc.get("subtopologies")) {
            order.add(s.get("id").asText());
            subtopologies.put(s.get("id").asText(),
                new int[] {s.get("partitions").asInt(), s.path("stateful").asBoolean(false) ? 1 : 0});
        }
        return new TopologyDescriber() {
            public List<String> subtopologies() { return order; }
            public int maxNumInputPartitions(final String id) {
                final int[] s = subtopologies.get(id);
                if (s == null) {
                    throw new NoSuchElementException(id);
                }
                return s[0];
            }
            public boolean isStateful(final String id) { return subtopologies.get(id)[1] == 1; }
        };
    }

    static GroupSpec spec(final JsonNode doc) {
        final JsonNode configs = doc.path("configs");
        final int standbys = configs.has("num.standby.replicas") ? Integer.parseInt(configs.get("num.standby.replicas").asText()) : 0;
        final AssignmentConfigs assignmentConfigs = new AssignmentConfigs() {
            public int numStandbyReplicas() { return standbys; }
            public List<String> rackAwareAssignmentTags() { return List.of(); }
        };
        final Map<String, MemberAssignmentMetadata> metadata = new HashMap<>();
        final Map<String, MemberAssignmentState> states = new HashMap<>();
        for (final JsonNode m : doc.get("members")) {
            final String processId = m.get("processId").asText();
            final Map<String, Set<Integer>> active = tasks(m.get("activeTasks"));
            final Map<String, Set<Integer>> standby = tasks(m.get("standbyTasks"));
            final Map<String, Set<Integer>> warmup = tasks(m.get("warmupTasks"));
            final Map<String, Map<Integer, Long>> offsets = offsets(m.get("taskOffsets"));
            final Map<String, Map<Integer, Long>> ends = offsets(m.get("taskEndOffsets"));
            metadata.put(m.get("memberId").asText(), new MemberAssignmentMetadata() {
                public Optional<String> instanceId() { return Optional.empty(); }
                public Optional<String> rackId() { return Optional.empty(); }
                public String processId() { return processId; }
                public Map<String, String> clientTags() { return Map.of(); }
            });
            states.put(m.get("memberId").asText(), new MemberAssignmentState() {
                public Map<String, Set<Integer>> activeTasks() { return active; }
                public Map<String, Set<Integer>> standbyTasks() { return standby; }
                public Map<String, Set<Integer>> warmupTasks() { return warmup; }
                public Map<String, Map<Integer, Long>> taskOffsets() { return offsets; }
                public Map<String, Map<Integer, Long>> taskEndOffsets() { return ends; }
            });
        }
        return new GroupSpec() {
            public Collection<String> memberIds() { return metadata.keySet(); }
            public MemberAssignmentMetadata memberMetadata(final String id) { return metadata.get(id); }
            public MemberAssignmentState memberAssignmentState(final String id) { return states.get(id); }
            public AssignmentConfigs configs() { return assignmentConfigs; }
        };
    }

    static Map<String, Set<Integer>> tasks(final JsonNode node) {
        final Map<String, Set<Integer>> out = new HashMap<>();
        if (node != null && node.isObject()) {
            for (final Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
                final Map.Entry<String, JsonNode> e = it.next();
                final Set<Integer> set = new HashSet<>();
                for (final JsonNode p : e.getValue()) {
                    set.add(p.asInt());
                }
                out.put(e.getKey(), set);
            }
        }
        return out;
    }

    static Map<String, Map<Integer, Long>> offsets(final JsonNode node) {
        final Map<String, Map<Integer, Long>> out = new HashMap<>();
        if (node != null && node.isObject()) {
            for (final Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
                final Map.Entry<String, JsonNode> e = it.next();
                final Map<Integer, Long> per = new HashMap<>();
                for (final Iterator<Map.Entry<String, JsonNode>> p = e.getValue().fields(); p.hasNext();) {
                    final Map.Entry<String, JsonNode> offset = p.next();
                    per.put(Integer.parseInt(offset.getKey()), offset.getValue().asLong());
                }
                out.put(e.getKey(), per);
            }
        }
        return out;
    }

    static Map<String, Object> describe(final GroupAssignment assignment) {
        final Map<String, Object> out = new TreeMap<>();
        for (final Map.Entry<String, MemberAssignment> e : assignment.members().entrySet()) {
            final Map<String, Object> m = new TreeMap<>();
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
}
