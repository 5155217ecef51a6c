// Runs Kafka's own LegacyStickyTaskAssignor on the live 4.4 cold start of tests/golden/live_legacy_sticky (20 tasks,
// subtopologies 1, 3 and 4 stateful, clients of 3, 1 and 2 threads, one standby) with its clients HashMap filled in
// two orders: the order Kafka's leader met them, then ProcessId order. tests/leader/test_live_cases.py holds its
// output. In this package because ClientState's (ProcessId, capacity) constructor is package-private.
// javac -cp "$KAFKA_HOME/libs/*" -d /tmp/ls LegacyStickyClientOrder.java
// java -cp "/tmp/ls:$KAFKA_HOME/libs/*" org.apache.kafka.streams.processor.internals.assignment.LegacyStickyClientOrder
package org.apache.kafka.streams.processor.internals.assignment;

import java.util.*;
import org.apache.kafka.streams.processor.TaskId;
import org.apache.kafka.streams.processor.assignment.AssignmentConfigs;
import org.apache.kafka.streams.processor.assignment.ProcessId;

public class LegacyStickyClientOrder {
    public static void main(String[] args) {
        String[][] clients = {{"0fd00e88-d8a6-41e7-9b89-e0f76c365679", "3"}, {"6bde9c64-11f0-4189-9faf-59f9b6131500", "1"},
                              {"92926a38-6426-4a8b-9c72-357a8b60cab7", "2"}};
        List<String[]> met = Arrays.asList(clients);
        List<String[]> sorted = new ArrayList<>(met);
        sorted.sort(Comparator.comparing(c -> UUID.fromString(c[0])));
        for (List<String[]> order : List.of(met, sorted)) {
            Map<ProcessId, ClientState> states = new HashMap<>();
            StringBuilder filled = new StringBuilder();
            for (String[] c : order) {
                ProcessId p = new ProcessId(UUID.fromString(c[0]));
                states.put(p, new ClientState(p, Integer.parseInt(c[1])));
                filled.append(c[0], 0, 8).append(' ');
            }
            Set<TaskId> all = new HashSet<>();
            Set<TaskId> stateful = new HashSet<>();
            for (int s = 0; s < 5; s++) for (int p = 0; p < 4; p++) {
                all.add(new TaskId(s, p));
                if (s == 1 || s == 3 || s == 4) stateful.add(new TaskId(s, p));
            }
            AssignmentConfigs configs = new AssignmentConfigs(10000L, 2, 1, 600000L, List.of(),
                OptionalInt.empty(), OptionalInt.empty(), "none");
            new LegacyStickyTaskAssignor().assign(states, all, stateful, null, configs);
            StringBuilder out = new StringBuilder("filled " + filled + "->");
            for (ProcessId p : new TreeSet<>(states.keySet()))
                out.append(" ").append(p.toString(), 0, 8).append(" actives ").append(new TreeSet<>(states.get(p).activeTasks()))
                   .append(" standbys ").append(new TreeSet<>(states.get(p).standbyTasks()));
            System.out.println(out);
        }
    }
}
