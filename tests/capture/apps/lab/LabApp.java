package lab;

import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.state.KeyValueStore;

/**
 * Kafka Streams applications for taskassign's live-Kafka tests.
 *
 * <p>args: TOPOLOGY BOOTSTRAP APPLICATION_ID STATE_DIR INSTANCE_NAME [STREAMS_PROPERTIES]
 *
 * <ul>
 *   <li>{@code wordcount}: lines of wc-input split into words, re-keyed by word (repartition topic
 *       {@code by-word-repartition}) and counted ({@code counts-store}) into wc-output; ignores the topic prefix.
 *   <li>{@code multi-store}: three sub-topologies, two repartition topics, an aggregation, a reduce and a count
 *       (stores {@code word-agg-store}, {@code length-reduce-store}, {@code length-count-store}).
 *   <li>{@code join}: a windowed stream-stream join of two co-partitioned input topics (two window stores).
 *   <li>{@code stateless}: filter and mapValues to an output topic; one sub-topology, no store.
 *   <li>{@code source-table}: a materialized source table ({@code st-table-store}); with
 *       {@code topology.optimization=all} its source topic doubles as its changelog.
 *   <li>{@code chain}: five sub-topologies joined by {@code repartition()}, three of them with a store.
 *   <li>{@code fk-join}: a foreign-key table-table join (KIP-213: subscription and response topics, four
 *       sub-topologies' worth of stores).
 * </ul>
 *
 * <p>It prints {@code Topology#describe()} on start and every state change as
 * {@code [INSTANCE_NAME] STATE A -> B}. The properties file adds or overrides any Streams config; its
 * {@code lab.topic.prefix} (not a Streams config, removed before Streams sees it) prefixes every topic name so that
 * one broker can host several differently partitioned copies of a topology; its {@code lab.leave.group.on.close}
 * (likewise the lab's own) makes a clean stop leave the group at once.
 */
public final class LabApp {
    static final String TOPIC_PREFIX_CONFIG = "lab.topic.prefix";
    static final String LEAVE_GROUP_ON_CLOSE_CONFIG = "lab.leave.group.on.close";

    private static final Serde<String> STRING = Serdes.String();
    private static final Serde<Long> LONG = Serdes.Long();

    private LabApp() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 5) {
            System.err.println("usage: lab.LabApp TOPOLOGY BOOTSTRAP APPLICATION_ID STATE_DIR INSTANCE_NAME [PROPS]");
            System.exit(2);
        }
        String topologyName = args[0];
        String name = args[4];
        Properties props = streamsProperties(args[1], args[2], args[3], name, args.length > 5 ? args[5] : "");
        String prefix = (String) props.remove(TOPIC_PREFIX_CONFIG);
        boolean leaveGroupOnClose = Boolean.parseBoolean((String) props.remove(LEAVE_GROUP_ON_CLOSE_CONFIG));

        StreamsBuilder builder = new StreamsBuilder();
        build(topologyName, prefix == null ? "" : prefix, builder);
        // build(props), not build(): topology.optimization only takes effect through the properties given here.
        Topology topology = builder.build(props);
        System.out.println(topology.describe());
        System.out.flush();

        KafkaStreams streams = new KafkaStreams(topology, props);
        CountDownLatch latch = new CountDownLatch(1);
        streams.setStateListener((newState, oldState) -> {
            System.out.println("[" + name + "] STATE " + oldState + " -> " + newState);
            System.out.flush();
        });
        streams.setUncaughtExceptionHandler(exception -> {
            System.out.println("[" + name + "] UNCAUGHT " + exception);
            exception.printStackTrace(System.out);
            System.out.flush();
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            close(streams, leaveGroupOnClose);
            latch.countDown();
        }));
        streams.start();
        latch.await();
    }

    /**
     * Close within 20 s; with {@code leaveGroup}, the members leave the group at once (LeaveGroup, or a leaving
     * heartbeat under the streams protocol) instead of staying until their session times out. The options class of
     * Kafka 3.3 to 4.1, deprecated but kept since 4.2, so that the app compiles against every 4.x.
     */
    @SuppressWarnings("deprecation")
    static void close(KafkaStreams streams, boolean leaveGroup) {
        streams.close(new KafkaStreams.CloseOptions().timeout(Duration.ofSeconds(20)).leaveGroup(leaveGroup));
    }

    /** The lab's base configuration, then the properties file on top. */
    static Properties streamsProperties(String bootstrap, String appId, String stateDir, String name, String file)
            throws Exception {
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, appId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir);
        props.put(StreamsConfig.CLIENT_ID_CONFIG, appId + "-" + name);
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.String().getClass());
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.String().getClass());
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, 1000);
        props.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0);
        props.put(StreamsConfig.APPLICATION_SERVER_CONFIG, "127.0.0.1:" + (name.hashCode() & 0x7fff | 0x1000));
        if (!file.isEmpty()) {
            try (Reader in = Files.newBufferedReader(Paths.get(file))) {
                Properties extra = new Properties();
                extra.load(in);
                props.putAll(extra);
            }
        }
        return props;
    }

    static void build(String topologyName, String prefix, StreamsBuilder builder) {
        switch (topologyName) {
            case "wordcount" -> wordCount(builder);
            case "multi-store" -> multiStore(prefix, builder);
            case "join" -> join(prefix, builder);
            case "stateless" -> stateless(prefix, builder);
            case "source-table" -> sourceTable(prefix, builder);
            case "chain" -> chain(prefix, builder);
            case "fk-join" -> fkJoin(prefix, builder);
            default -> throw new IllegalArgumentException("unknown topology '" + topologyName
                + "' (wordcount, multi-store, join, stateless, source-table, chain, fk-join)");
        }
    }

    /** Input wc-input; output wc-output. Sub-topologies: 0 split and re-key, 1 count by word. */
    static void wordCount(StreamsBuilder builder) {
        builder.stream("wc-input", Consumed.with(STRING, STRING))
            .flatMapValues(line -> java.util.Arrays.asList(line.toLowerCase(Locale.ROOT).split("\\W+")))
            .filter((key, word) -> !word.isEmpty())
            .groupBy((key, word) -> word, Grouped.with("by-word", STRING, STRING))
            .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("counts-store")
                .withKeySerde(STRING).withValueSerde(LONG))
            .toStream()
            .to("wc-output", Produced.with(STRING, LONG));
    }

    /** Input ms-input; outputs ms-word-agg and ms-length-counts. Sub-topologies: 0 source, 1 by-word, 2 by-length. */
    static void multiStore(String prefix, StreamsBuilder builder) {
        KStream<String, String> lines = builder.stream(prefix + "ms-input", Consumed.with(STRING, STRING));
        lines.groupBy((key, line) -> firstWord(line), Grouped.with("by-word", STRING, STRING))
            .aggregate(() -> 0L, (word, line, total) -> total + line.length(),
                Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("word-agg-store")
                    .withKeySerde(STRING).withValueSerde(LONG))
            .toStream()
            .to(prefix + "ms-word-agg", Produced.with(STRING, LONG));
        KTable<String, String> longest = lines
            .groupBy((key, line) -> Integer.toString(line.length() % 10), Grouped.with("by-length", STRING, STRING))
            .reduce((kept, line) -> line.compareTo(kept) > 0 ? line : kept,
                Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("length-reduce-store")
                    .withKeySerde(STRING).withValueSerde(STRING));
        longest.toStream()
            .groupByKey(Grouped.with(STRING, STRING))
            .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("length-count-store")
                .withKeySerde(STRING).withValueSerde(LONG))
            .toStream()
            .to(prefix + "ms-length-counts", Produced.with(STRING, LONG));
    }

    /** Inputs join-orders and join-payments (co-partitioned); output join-output. */
    static void join(String prefix, StreamsBuilder builder) {
        KStream<String, String> orders = builder.stream(prefix + "join-orders", Consumed.with(STRING, STRING));
        KStream<String, String> payments = builder.stream(prefix + "join-payments", Consumed.with(STRING, STRING));
        orders.join(payments, (order, payment) -> order + "|" + payment,
                JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMinutes(5)),
                StreamJoined.<String, String, String>with(STRING, STRING, STRING).withStoreName("order-payment"))
            .to(prefix + "join-output", Produced.with(STRING, STRING));
    }

    /** Input sl-input; output sl-output. */
    static void stateless(String prefix, StreamsBuilder builder) {
        builder.stream(prefix + "sl-input", Consumed.with(STRING, STRING))
            .filter((key, value) -> value != null && !value.isEmpty())
            .mapValues(value -> value.toUpperCase(Locale.ROOT))
            .to(prefix + "sl-output", Produced.with(STRING, STRING));
    }

    /** Input st-input (a table); output st-output. */
    static void sourceTable(String prefix, StreamsBuilder builder) {
        builder.table(prefix + "st-input", Consumed.with(STRING, STRING),
                Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("st-table-store")
                    .withKeySerde(STRING).withValueSerde(STRING))
            .toStream()
            .mapValues(value -> value == null ? null : Integer.toString(value.length()))
            .to(prefix + "st-output", Produced.with(STRING, STRING));
    }

    /** Input ch-input; output ch-output. Sub-topologies 0-4, each after a repartition(); stores in 1, 3 and 4. */
    static void chain(String prefix, StreamsBuilder builder) {
        KStream<String, String> stream = builder.stream(prefix + "ch-input", Consumed.with(STRING, STRING));
        for (int step = 1; step <= 4; step++) {
            final int width = step;
            stream = stream
                .selectKey((key, value) -> value == null ? key : value.substring(0, Math.min(width, value.length())))
                .repartition(Repartitioned.<String, String>as("chain-" + step).withKeySerde(STRING)
                    .withValueSerde(STRING));
            if (step % 2 == 1) {
                stream = stream.toTable(Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as(
                    "chain-table-" + step).withKeySerde(STRING).withValueSerde(STRING)).toStream();
            }
        }
        stream.groupByKey(Grouped.with(STRING, STRING))
            .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("chain-count")
                .withKeySerde(STRING).withValueSerde(LONG))
            .toStream()
            .to(prefix + "ch-output", Produced.with(STRING, LONG));
    }

    /** Inputs fk-orders and fk-customers (tables); output fk-output: orders joined to the customer their value
     * names first. */
    static void fkJoin(String prefix, StreamsBuilder builder) {
        KTable<String, String> orders = builder.table(prefix + "fk-orders", Consumed.with(STRING, STRING),
            Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("fk-orders-store")
                .withKeySerde(STRING).withValueSerde(STRING));
        KTable<String, String> customers = builder.table(prefix + "fk-customers", Consumed.with(STRING, STRING),
            Materialized.<String, String, KeyValueStore<Bytes, byte[]>>as("fk-customers-store")
                .withKeySerde(STRING).withValueSerde(STRING));
        orders.join(customers, order -> firstWord(order), (order, customer) -> order + "|" + customer)
            .toStream()
            .to(prefix + "fk-output", Produced.with(STRING, STRING));
    }

    static String firstWord(String line) {
        String trimmed = line == null ? "" : line.trim();
        int space = trimmed.indexOf(' ');
        return (space < 0 ? trimmed : trimmed.substring(0, space)).toLowerCase(Locale.ROOT);
    }
}
