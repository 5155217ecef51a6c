import java.io.FileInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.util.Properties;
import java.util.TreeSet;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.ThreadMetadata;
import org.apache.kafka.streams.TaskMetadata;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;

/**
 * A small stateful Kafka Streams application for the live bridge tests: input -> count per key (a logged store) ->
 * output. {@code java BridgeStreamsApp BOOTSTRAP APP_ID STATE_DIR HOST:PORT REPORT.json EXTRA.properties}. Every
 * 300 ms it writes REPORT.json: its state and the active and standby tasks of its threads.
 */
public final class BridgeStreamsApp {
    public static void main(final String[] args) throws Exception {
        final Properties props = new Properties();
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, args[1]);
        props.put(StreamsConfig.STATE_DIR_CONFIG, args[2]);
        props.put(StreamsConfig.APPLICATION_SERVER_CONFIG, args[3]);
        props.put(StreamsConfig.NUM_STANDBY_REPLICAS_CONFIG, 1);
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 200);
        props.put(StreamsConfig.consumerPrefix("session.timeout.ms"), 6000);
        props.put(StreamsConfig.consumerPrefix("heartbeat.interval.ms"), 1000);
        try (FileInputStream in = new FileInputStream(args[5])) {
            props.load(in);
        }
        final StreamsBuilder builder = new StreamsBuilder();
        builder.stream("bridge-input", Consumed.with(Serdes.String(), Serdes.String()))
            .groupByKey()
            .count(Materialized.as("counts"))
            .toStream()
            .to("bridge-output", Produced.with(Serdes.String(), Serdes.Long()));
        final KafkaStreams streams = new KafkaStreams(builder.build(), props);
        Runtime.getRuntime().addShutdownHook(new Thread(streams::close));
        streams.start();
        final Path report = Paths.get(args[4]);
        final Path tmp = Paths.get(args[4] + ".tmp");
        while (true) {
            final TreeSet<String> active = new TreeSet<>();
            final TreeSet<String> standby = new TreeSet<>();
            try {
                for (final ThreadMetadata thread : streams.metadataForLocalThreads()) {
                    for (final TaskMetadata task : thread.activeTasks()) {
                        active.add(task.taskId().toString());
                    }
                    for (final TaskMetadata task : thread.standbyTasks()) {
                        standby.add(task.taskId().toString());
                    }
                }
            } catch (final RuntimeException e) {
                // between states: report what we have
            }
            final String text = "{\"state\":\"" + streams.state() + "\",\"host\":\"" + args[3] + "\",\"active\":"
                + list(active) + ",\"standby\":" + list(standby) + "}";
            Files.write(tmp, text.getBytes(StandardCharsets.UTF_8));
            Files.move(tmp, report, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            Thread.sleep(300);
        }
    }

    private static String list(final TreeSet<String> items) {
        final StringBuilder out = new StringBuilder("[");
        for (final String item : items) {
            if (out.length() > 1) {
                out.append(',');
            }
            out.append('"').append(item).append('"');
        }
        return out.append(']').toString();
    }
}
