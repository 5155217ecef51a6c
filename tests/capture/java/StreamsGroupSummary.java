import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.StreamsGroupDescription;
import org.apache.kafka.clients.admin.StreamsGroupMemberAssignment;
import org.apache.kafka.clients.admin.StreamsGroupMemberDescription;
import org.apache.kafka.clients.admin.StreamsGroupSubtopologyDescription;

/**
 * A streams group as Kafka's own Admin client decodes it (Admin#describeStreamsGroups), printed as JSON: the
 * independent reading a recording's summary.json holds, to check taskassign's capture of the recorded frames.
 *
 * <p>args: BOOTSTRAP GROUP_ID
 */
public final class StreamsGroupSummary {
    private StreamsGroupSummary() {
    }

    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        try (Admin admin = Admin.create(props)) {
            StreamsGroupDescription g = admin.describeStreamsGroups(List.of(args[1])).all().get().get(args[1]);
            StringBuilder out = new StringBuilder("{");
            field(out, "group_id", str(g.groupId())).append(',');
            field(out, "group_state", str(g.groupState().toString())).append(',');
            field(out, "group_epoch", Integer.toString(g.groupEpoch())).append(',');
            field(out, "assignment_epoch", Integer.toString(g.targetAssignmentEpoch())).append(',');
            field(out, "topology_epoch", Integer.toString(g.topologyEpoch())).append(',');
            field(out, "assignor_name", g.assignorName().map(StreamsGroupSummary::str).orElse("null")).append(',');
            List<String> subs = new ArrayList<>();
            for (StreamsGroupSubtopologyDescription s : g.subtopologies()) {
                subs.add("{\"id\":" + str(s.subtopologyId()) + ",\"source_topics\":" + strings(s.sourceTopics())
                    + ",\"repartition_sink_topics\":" + strings(s.repartitionSinkTopics()) + "}");
            }
            field(out, "subtopologies", "[" + String.join(",", subs) + "]").append(',');
            List<String> members = new ArrayList<>();
            for (StreamsGroupMemberDescription m : g.members()) {
                StringBuilder b = new StringBuilder("{");
                field(b, "member_id", str(m.memberId())).append(',');
                field(b, "member_epoch", Integer.toString(m.memberEpoch())).append(',');
                field(b, "process_id", str(m.processId())).append(',');
                field(b, "client_id", str(m.clientId())).append(',');
                field(b, "client_host", str(m.clientHost())).append(',');
                field(b, "instance_id", m.instanceId().map(StreamsGroupSummary::str).orElse("null")).append(',');
                field(b, "rack_id", m.rackId().map(StreamsGroupSummary::str).orElse("null")).append(',');
                field(b, "topology_epoch", Integer.toString(m.topologyEpoch())).append(',');
                field(b, "is_classic", Boolean.toString(m.isClassic())).append(',');
                field(b, "client_tags", map(m.clientTags())).append(',');
                field(b, "user_endpoint", m.userEndpoint().map(e -> "{\"host\":" + str(e.host()) + ",\"port\":"
                    + e.port() + "}").orElse("null")).append(',');
                assignment(b, "", m.assignment()).append(',');
                assignment(b, "target_", m.targetAssignment()).append(',');
                field(b, "task_offsets", offsets(m.taskOffsets())).append(',');
                field(b, "task_end_offsets", offsets(m.taskEndOffsets()));
                members.add(b.append('}').toString());
            }
            field(out, "members", "[" + String.join(",", members) + "]");
            System.out.println(out.append('}'));
        }
    }

    static StringBuilder assignment(StringBuilder b, String prefix, StreamsGroupMemberAssignment a) {
        field(b, prefix + "active", tasks(a.activeTasks())).append(',');
        field(b, prefix + "standby", tasks(a.standbyTasks())).append(',');
        return field(b, prefix + "warmup", tasks(a.warmupTasks()));
    }

    static String tasks(List<StreamsGroupMemberAssignment.TaskIds> ids) {
        List<String> names = new ArrayList<>();
        for (StreamsGroupMemberAssignment.TaskIds t : ids) {
            for (Integer p : t.partitions()) {
                names.add(str(t.subtopologyId() + "_" + p));
            }
        }
        return "[" + String.join(",", names) + "]";
    }

    static String offsets(List<StreamsGroupMemberDescription.TaskOffset> offsets) {
        List<String> rows = new ArrayList<>();
        for (StreamsGroupMemberDescription.TaskOffset o : offsets) {
            rows.add("[" + str(o.subtopologyId()) + "," + o.partition() + "," + o.offset() + "]");
        }
        return "[" + String.join(",", rows) + "]";
    }

    static String map(Map<String, String> values) {
        List<String> rows = new ArrayList<>();
        for (Map.Entry<String, String> e : new TreeMap<>(values).entrySet()) {
            rows.add(str(e.getKey()) + ":" + str(e.getValue()));
        }
        return "{" + String.join(",", rows) + "}";
    }

    static String strings(Collection<String> values) {
        List<String> rows = new ArrayList<>();
        for (String v : values) {
            rows.add(str(v));
        }
        return "[" + String.join(",", rows) + "]";
    }

    static StringBuilder field(StringBuilder b, String name, String json) {
        return b.append(str(name)).append(':').append(json);
    }

    static String str(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            if (c == '"' || c == '\\') {
                b.append('\\').append(c);
            } else if (c < 0x20) {
                b.append(String.format("\\u%04x", (int) c));
            } else {
                b.append(c);
            }
        }
        return b.append('"').toString();
    }
}
