// Prints the iteration order of the collections Kafka's leader writes into AssignmentInfo, built with
// Kafka's own HostInfo and TopicPartition classes: tests/leader/test_host_maps.py holds its output.
// javac -cp "$KAFKA_HOME/libs/*" -d /tmp/hm HostMapOrder.java && java -cp "/tmp/hm:$KAFKA_HOME/libs/*" HostMapOrder
import java.util.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.streams.state.HostInfo;

public class HostMapOrder {
    public static void main(String[] args) {
        Map<HostInfo, Integer> hosts = new HashMap<>();
        String[] names = {"h", "idle", "host0.example", "host1.example", "host2.example", "10.0.0.7", "app-3.svc"};
        int port = 8080;
        for (String n : names) hosts.put(new HostInfo(n, port++), 0);
        StringBuilder sb = new StringBuilder("hosts:");
        for (HostInfo h : hosts.keySet()) sb.append(' ').append(h.host()).append(':').append(h.port());
        System.out.println(sb);
        // a host's partitions: tasks in TaskId order, each task's partitions added
        Set<TopicPartition> parts = new HashSet<>();
        for (int p = 0; p < 24; p += 3) {
            parts.add(new TopicPartition("orders", p));
            parts.add(new TopicPartition("app-by-key-repartition", p));
        }
        sb = new StringBuilder("partitions:");
        for (TopicPartition tp : parts) sb.append(' ').append(tp.topic()).append('-').append(tp.partition());
        System.out.println(sb);
    }
}
