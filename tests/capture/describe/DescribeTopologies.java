/*
 * Generates the fixtures of tests/capture/test_topology_text.py: for each topology below, the text that
 * Kafka Streams' Topology#describe() prints (<name>.txt) and what Kafka's own InternalTopologyBuilder derives
 * from the topology for application id "app" (<name>.expected.json): per subtopology the source topics,
 * repartition source topics (with the partition count the topology fixes, else null), state stores,
 * store -> changelog topic, sink topics; the global stores; the co-partition groups.
 *
 * Build and run (never commit the classes):
 *   tmp=$(mktemp -d)
 *   javac -d "$tmp" -cp "$KAFKA_HOME/libs/*" tests/capture/describe/DescribeTopologies.java
 *   java -cp "$tmp:$KAFKA_HOME/libs/*" DescribeTopologies tests/capture/data/describe
 *
 * The expected files are read by reflection from Kafka's internals (Topology.internalTopologyBuilder,
 * InternalTopologyBuilder.subtopologyToTopicsInfo() / copartitionGroups() after buildTopology()), exactly
 * what the group leader (StreamsPartitionAssignor) works from.
 */

import java.io.IOException;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Supplier;
import java.util.regex.Pattern;

import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.utils.Bytes;
import org.apache.kafka.streams.KeyValue;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.TopologyDescription;
import org.apache.kafka.streams.kstream.Branched;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.GlobalKTable;
import org.apache.kafka.streams.kstream.Grouped;
import org.apache.kafka.streams.kstream.JoinWindows;
import org.apache.kafka.streams.kstream.Joined;
import org.apache.kafka.streams.kstream.KGroupedStream;
import org.apache.kafka.streams.kstream.KStream;
import org.apache.kafka.streams.kstream.KTable;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Named;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.kstream.Repartitioned;
import org.apache.kafka.streams.kstream.SessionWindows;
import org.apache.kafka.streams.kstream.SlidingWindows;
import org.apache.kafka.streams.kstream.StreamJoined;
import org.apache.kafka.streams.kstream.Suppressed;
import org.apache.kafka.streams.kstream.TableJoined;
import org.apache.kafka.streams.kstream.TimeWindows;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorSupplier;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.internals.InternalTopicConfig;
import org.apache.kafka.streams.processor.internals.InternalTopologyBuilder;
import org.apache.kafka.streams.processor.internals.ProcessorTopology;
import org.apache.kafka.streams.processor.internals.TopologyMetadata;
import org.apache.kafka.streams.state.KeyValueStore;
import org.apache.kafka.streams.state.StoreBuilder;
import org.apache.kafka.streams.state.Stores;

public final class DescribeTopologies {

    static final String APP = "app";

    /** A processor that forwards nothing; describe() only needs the supplier. */
    static final class Noop implements Processor<Object, Object, Object, Object> {
        @Override
        public void process(final Record<Object, Object> record) { }
    }

    static ProcessorSupplier<Object, Object, Object, Object> noop() {
        return Noop::new;
    }

    static StoreBuilder<KeyValueStore<String, String>> kv(final String name, final boolean persistent) {
        return Stores.keyValueStoreBuilder(
            persistent ? Stores.persistentKeyValueStore(name) : Stores.inMemoryKeyValueStore(name),
            Serdes.String(), Serdes.String());
    }

    static Properties props(final boolean optimize) {
        final Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, APP);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, "localhost:9092");
        props.put(StreamsConfig.DEFAULT_KEY_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.DEFAULT_VALUE_SERDE_CLASS_CONFIG, Serdes.StringSerde.class);
        props.put(StreamsConfig.STATE_DIR_CONFIG, System.getProperty("java.io.tmpdir") + "/describe-topologies");
        if (optimize) {
            props.put(StreamsConfig.TOPOLOGY_OPTIMIZATION_CONFIG, StreamsConfig.OPTIMIZE);
        }
        return props;
    }

    static final class Case {
        final String name;
        final boolean optimize;
        final Supplier<Topology> topology;

        Case(final String name, final boolean optimize, final Supplier<Topology> topology) {
            this.name = name;
            this.optimize = optimize;
            this.topology = topology;
        }
    }

    static final List<Case> CASES = new ArrayList<>();

    static void dsl(final String name, final boolean optimize, final java.util.function.Consumer<StreamsBuilder> body) {
        CASES.add(new Case(name, optimize, () -> {
            final StreamsBuilder builder = new StreamsBuilder();
            body.accept(builder);
            return builder.build(props(optimize));
        }));
    }

    static void papi(final String name, final Supplier<Topology> body) {
        CASES.add(new Case(name, false, body));
    }

    static {
        dsl("wordcount", false, b -> {
            final KStream<String, String> lines = b.stream("wc-input");
            lines.flatMapValues(v -> Arrays.asList(v.split(" ")))
                .groupBy((k, w) -> w, Grouped.as("by-word"))
                .count(Materialized.as("counts-store"))
                .toStream()
                .to("wc-output");
        });
        dsl("stateless", false, b -> b.<String, String>stream("in")
            .filter((k, v) -> v != null)
            .mapValues(v -> v.toUpperCase())
            .to("out"));
        dsl("repartition_named", false, b -> b.<String, String>stream("in")
            .repartition(Repartitioned.<String, String>as("x").withNumberOfPartitions(4))
            .groupByKey()
            .count(Materialized.as("x-counts"))
            .toStream()
            .to("out"));
        dsl("repartition_unnamed", false, b -> b.<String, String>stream("in")
            .selectKey((k, v) -> v)
            .repartition()
            .mapValues(v -> v + "!")
            .to("out"));
        dsl("select_key_aggregate", false, b -> b.<String, String>stream("clicks")
            .selectKey((k, v) -> v)
            .groupByKey()
            .reduce((a, c) -> a + c)
            .toStream()
            .to("clicks-by-value"));
        dsl("stream_stream_join", false, b -> {
            final KStream<String, String> left = b.stream("left");
            final KStream<String, String> right = b.stream("right");
            left.join(right, (l, r) -> l + r, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMinutes(5)))
                .to("joined");
        });
        dsl("stream_stream_join_named", false, b -> {
            final KStream<String, String> left = b.stream("left");
            final KStream<String, String> right = b.stream("right");
            left.join(right, (l, r) -> l + r, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMinutes(5)),
                    StreamJoined.<String, String, String>as("ssj-store").withName("ssj"))
                .to("joined");
        });
        dsl("stream_stream_outer_join", false, b -> {
            final KStream<String, String> left = b.stream("left");
            final KStream<String, String> right = b.stream("right");
            left.outerJoin(right, (l, r) -> l + r,
                    JoinWindows.ofTimeDifferenceAndGrace(Duration.ofMinutes(5), Duration.ofMinutes(1)))
                .to("outer-joined");
            left.leftJoin(right, (l, r) -> l + r,
                    JoinWindows.ofTimeDifferenceAndGrace(Duration.ofMinutes(1), Duration.ofMinutes(1)))
                .to("left-joined");
        });
        dsl("stream_stream_join_rekeyed", false, b -> {
            final KStream<String, String> left = b.<String, String>stream("left").selectKey((k, v) -> v);
            final KStream<String, String> right = b.<String, String>stream("right").selectKey((k, v) -> v);
            left.join(right, (l, r) -> l + r, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofMinutes(5)))
                .to("joined");
        });
        dsl("stream_self_join", false, b -> {
            final KStream<String, String> s = b.stream("events");
            s.join(s, (l, r) -> l + r, JoinWindows.ofTimeDifferenceWithNoGrace(Duration.ofSeconds(10)),
                    StreamJoined.<String, String, String>with(Serdes.String(), Serdes.String(), Serdes.String()))
                .to("pairs");
        });
        dsl("stream_table_join", false, b -> {
            final KTable<String, String> customers = b.table("customers");
            b.<String, String>stream("orders")
                .selectKey((k, v) -> v)
                .join(customers, (o, c) -> o + c)
                .to("enriched-orders");
        });
        dsl("stream_table_join_named", false, b -> {
            final KTable<String, String> customers = b.table("customers", Materialized.as("customers-store"));
            b.<String, String>stream("orders")
                .leftJoin(customers, (o, c) -> o + c, Joined.as("enrich"))
                .to("enriched-orders");
        });
        dsl("table_table_join", false, b -> {
            final KTable<String, String> a = b.table("table-a");
            final KTable<String, String> c = b.table("table-c", Materialized.as("c-store"));
            a.join(c, (x, y) -> x + y).toStream().to("a-join-c");
            a.outerJoin(c, (x, y) -> x + y, Named.as("tt-outer"), Materialized.as("tt-outer-store"))
                .toStream().to("a-outer-c");
        });
        dsl("foreign_key_join", false, b -> {
            final KTable<String, String> orders = b.table("orders");
            final KTable<String, String> products = b.table("products");
            orders.join(products, v -> v, (o, p) -> o + p).toStream().to("orders-with-products");
        });
        dsl("foreign_key_join_named", false, b -> {
            final KTable<String, String> orders = b.table("orders", Materialized.as("orders-store"));
            final KTable<String, String> products = b.table("products", Materialized.as("products-store"));
            orders.leftJoin(products, v -> v, (o, p) -> o + p, TableJoined.as("fk"),
                    Materialized.as("fk-result-store"))
                .toStream().to("orders-with-products");
        });
        dsl("global_table", false, b -> {
            final GlobalKTable<String, String> countries = b.globalTable("countries",
                Materialized.as("countries-store"));
            b.<String, String>stream("users")
                .join(countries, (k, v) -> v, (u, c) -> u + c)
                .to("users-with-country");
        });
        dsl("global_table_between", false, b -> {
            b.<String, String>stream("a").groupByKey().count().toStream().to("a-counts");
            b.globalTable("g1");
            b.<String, String>stream("b").selectKey((k, v) -> v).groupByKey().count().toStream().to("b-counts");
            b.globalTable("g2", Materialized.as("g2-store"));
        });
        dsl("source_table", false, b -> b.<String, String>table("tbl", Materialized.as("tbl-store"))
            .filter((k, v) -> v != null)
            .toStream().to("tbl-out"));
        dsl("source_table_optimized", true, b -> b.<String, String>table("tbl", Materialized.as("tbl-store"))
            .filter((k, v) -> v != null)
            .toStream().to("tbl-out"));
        dsl("source_table_unmaterialized", false, b -> b.<String, String>table("tbl")
            .mapValues(v -> v + "!")
            .toStream().to("tbl-out"));
        dsl("table_groupby", false, b -> b.<String, String>table("users", Materialized.as("users-store"))
            .groupBy((k, v) -> KeyValue.pair(v, k))
            .count(Materialized.as("users-per-region"))
            .toStream().to("region-counts"));
        dsl("table_groupby_optimized", true, b -> b.<String, String>table("users", Materialized.as("users-store"))
            .groupBy((k, v) -> KeyValue.pair(v, k))
            .count(Materialized.as("users-per-region"))
            .toStream().to("region-counts"));
        for (final boolean optimize : new boolean[] {false, true}) {
            dsl(optimize ? "repartition_merge_optimized" : "repartition_merge_unoptimized", optimize, b -> {
                final KStream<String, String> rekeyed = b.<String, String>stream("input").selectKey((k, v) -> v);
                rekeyed.groupByKey().count(Materialized.as("count-store")).toStream().to("counts");
                rekeyed.groupByKey().reduce((x, y) -> x + y, Materialized.as("reduce-store")).toStream().to("reduced");
                final KTable<String, String> t = b.table("lookup", Materialized.as("lookup-store"));
                rekeyed.join(t, (x, y) -> x + y).to("joined");
            });
        }
        dsl("topic_pattern", false, b -> b.<String, String>stream(Pattern.compile("in-.*"))
            .groupByKey().count().toStream().to("pattern-counts"));
        dsl("topic_pattern_mixed", false, b -> {
            b.<String, String>stream(Pattern.compile("logs-[a-z]+")).to("all-logs");
            b.<String, String>stream(List.of("m1", "m2")).to("merged");
        });
        dsl("dynamic_sink", false, b -> b.<String, String>stream("events")
            .to((k, v, ctx) -> "events-" + v, Produced.as("router")));
        dsl("suppress", false, b -> b.<String, String>stream("metrics")
            .groupByKey()
            .windowedBy(TimeWindows.ofSizeAndGrace(Duration.ofMinutes(1), Duration.ofSeconds(10)))
            .count(Materialized.as("per-minute"))
            .suppress(Suppressed.untilWindowCloses(Suppressed.BufferConfig.unbounded()).withName("final"))
            .toStream()
            .map((w, c) -> KeyValue.pair(w.key(), String.valueOf(c)))
            .to("final-counts"));
        dsl("windowed_aggregations", false, b -> {
            final KGroupedStream<String, String> g = b.<String, String>stream("pings").groupByKey();
            g.windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofMinutes(5))).count();
            g.windowedBy(TimeWindows.ofSizeWithNoGrace(Duration.ofMinutes(5)).advanceBy(Duration.ofMinutes(1)))
                .count(Materialized.as("hopping"));
            g.windowedBy(SessionWindows.ofInactivityGapWithNoGrace(Duration.ofMinutes(30))).count();
            g.windowedBy(SlidingWindows.ofTimeDifferenceWithNoGrace(Duration.ofMinutes(10)))
                .reduce((x, y) -> x + y, Materialized.as("sliding"));
        });
        dsl("cogroup", false, b -> {
            final KGroupedStream<String, String> a = b.<String, String>stream("cg-a").groupByKey();
            final KGroupedStream<String, String> c = b.<String, String>stream("cg-c").groupByKey();
            a.<String>cogroup((k, v, agg) -> agg + v)
                .cogroup(c, (k, v, agg) -> agg + v)
                .aggregate(() -> "", Materialized.as("cogrouped"))
                .toStream().to("cogroup-out");
        });
        dsl("merge_then_aggregate", false, b -> {
            final KStream<String, String> a = b.stream("merge-a");
            final KStream<String, String> c = b.stream("merge-c");
            a.merge(c).groupByKey().count(Materialized.as("merged-count")).toStream().to("merge-out");
        });
        dsl("multi_topic_source", false, b -> b.<String, String>stream(List.of("t1", "t2", "t3"))
            .groupByKey().reduce((x, y) -> y).toStream().to("latest"));
        dsl("branches", false, b -> b.<String, String>stream("mixed")
            .split(Named.as("split-"))
            .branch((k, v) -> v.startsWith("a"), Branched.withConsumer(s -> s.to("as")))
            .branch((k, v) -> v.startsWith("b"), Branched.withConsumer(s -> s.groupByKey().count().toStream()
                .to("b-counts")))
            .defaultBranch(Branched.withConsumer(s -> s.to("others"))));
        dsl("named_odd_characters", false, b -> b.<String, String>stream("odd.topic_name-1",
                Consumed.as("src.odd_name-1"))
            .filter((k, v) -> true, Named.as("filter.with_dots-and_underscores"))
            .groupByKey(Grouped.as("Grp.1_x"))
            .count(Named.as("cnt.1_A"), Materialized.as("store.with-dots_and_underscores.1"))
            .toStream(Named.as("to-stream.X"))
            .to("out.topic_1", Produced.as("sink.odd-1")));
        dsl("process_shared_store", false, b -> {
            b.addStateStore(kv("dsl-shared", true));
            b.<String, String>stream("p-a").process(noopTyped(), "dsl-shared");
            b.<String, String>stream("p-b").process(noopTyped(), "dsl-shared");
        });
        dsl("versioned_table_join", false, b -> {
            final KTable<String, String> prices = b.table("prices",
                Materialized.as(Stores.persistentVersionedKeyValueStore("prices-versioned", Duration.ofHours(1))));
            b.<String, String>stream("trades")
                .join(prices, (t, p) -> t + p, Joined.<String, String, String>as("trade-price")
                    .withGracePeriod(Duration.ofMinutes(1)))
                .to("priced-trades");
        });
        dsl("logging_disabled", false, b -> b.<String, String>stream("ld-in")
            .groupByKey()
            .count(Materialized.<String, Long, KeyValueStore<Bytes, byte[]>>as("no-log-store").withLoggingDisabled())
            .toStream()
            .groupBy((k, v) -> k)
            .count(Materialized.<String, Long>as(Stores.inMemoryKeyValueStore("in-memory-logged")))
            .toStream().to("ld-out"));

        dsl("user_named_table_join", false, b -> {
            final KTable<String, String> customers = b.table("customers", Consumed.as("cust"),
                Materialized.as("cust-store"));
            b.<String, String>stream("orders", Consumed.as("orders-in"))
                .join(customers, (o, c) -> o + c, Joined.as("enrich"))
                .to("enriched-orders", Produced.as("enriched-out"));
        });
        dsl("user_named_join_aggregated_table", false, b -> {
            final KTable<String, Long> counts = b.<String, String>stream("clicks").groupByKey()
                .count(Materialized.as("click-counts"));
            b.<String, String>stream("views")
                .leftJoin(counts, (v, c) -> v + c, Joined.as("views-with-clicks"))
                .to("views-enriched");
        });
        dsl("user_named_join_missed", false, b -> {
            final KTable<String, String> table = b.<String, String>stream("updates")
                .toTable(Named.as("latest"), Materialized.as("latest-store"));
            b.<String, String>stream("requests")
                .join(table, (r, u) -> r + u, Joined.as("answer"))
                .to("answers");
        });
        dsl("cogroup_named", false, b -> {
            final KGroupedStream<String, String> a = b.<String, String>stream("cg-a").groupByKey();
            final KGroupedStream<String, String> c = b.<String, String>stream("cg-c").groupByKey();
            final KGroupedStream<String, String> d = b.<String, String>stream("cg-d")
                .selectKey((k, v) -> v).groupByKey(Grouped.as("cg-d-rekeyed"));
            a.<String>cogroup((k, v, agg) -> agg + v)
                .cogroup(c, (k, v, agg) -> agg + v)
                .cogroup(d, (k, v, agg) -> agg + v)
                .aggregate(() -> "", Named.as("cg"), Materialized.as("cogrouped"))
                .toStream().to("cogroup-out");
        });
        dsl("chained_joins", false, b -> {
            final KTable<String, String> a = b.table("ta");
            final KTable<String, String> c = b.table("tc");
            final KStream<String, String> m = b.<String, String>stream("s1").merge(b.stream("s2"));
            m.join(a.join(c, (x, y) -> x + y), (s, t) -> s + t).to("chained");
        });
        dsl("written_and_read_back", false, b -> {
            b.<String, String>stream("raw").mapValues(v -> v.trim()).to("cleaned");
            b.<String, String>stream("cleaned").groupByKey().count().toStream().to("cleaned-counts");
            b.<String, String>stream("raw2").to("staging-repartition");
            b.<String, String>stream("staging-repartition").groupByKey().count().toStream().to("staging-counts");
        });
        dsl("process_reads_table_store", false, b -> {
            b.table("ref", Materialized.as("ref-store"));
            b.<String, String>stream("lookups").process(noopTyped(), "ref-store");
        });
        papi("empty", Topology::new);

        papi("papi_basic", () -> new Topology()
            .addSource("Source", "papi-in")
            .addProcessor("Process", noop(), "Source")
            .addStateStore(kv("papi-store", true), "Process")
            .addSink("Sink", "papi-out", "Process"));
        papi("papi_multi_source", () -> new Topology()
            .addSource("SourceA", "in-a")
            .addSource("SourceB", "in-b", "in-c")
            .addProcessor("Joiner", noop(), "SourceA", "SourceB")
            .addSink("Sink", "joined-out", "Joiner"));
        papi("papi_shared_stores", () -> new Topology()
            .addSource("SrcOne", "one")
            .addSource("SrcTwo", "two")
            .addSource("SrcThree", "three")
            .addProcessor("P1", noop(), "SrcOne")
            .addProcessor("P2", noop(), "SrcTwo")
            .addProcessor("P3", noop(), "SrcThree")
            .addStateStore(kv("shared-persistent", true), "P1", "P2")
            .addStateStore(kv("shared-in-memory", false), "P1", "P2")
            .addStateStore(kv("p3-unlogged", true).withLoggingDisabled(), "P3")
            .addStateStore(kv("p3-logged", false), "P3")
            .addStateStore(kv("p3-cached", true).withCachingEnabled(), "P3")
            .addSink("SinkOne", "out-one", "P1", "P2")
            .addSink("SinkThree", "out-three", "P3"));
        papi("papi_odd_names", () -> new Topology()
            .addSource("source, with comma", "odd-in")
            .addProcessor("proc (stores: [fake])", noop(), "source, with comma")
            .addProcessor("none", noop(), "source, with comma")
            .addProcessor("arrow --> name", noop(), "proc (stores: [fake])", "none")
            .addStateStore(kv("store-1", false).withLoggingDisabled(), "proc (stores: [fake])", "arrow --> name")
            .addSink("sink <-- x", "odd-out", "arrow --> name"));
        papi("papi_global_store", () -> new Topology()
            .addSource("Src", "facts")
            .addProcessor("Use", noop(), "Src")
            .addSink("Out", "facts-out", "Use")
            .addGlobalStore(kv("global-kv", true).withLoggingDisabled(), "GlobalSrc",
                Serdes.String().deserializer(), Serdes.String().deserializer(), "global-topic", "GlobalProc",
                () -> new Processor<String, String, Void, Void>() {
                    @Override
                    public void process(final Record<String, String> record) { }
                }));
        papi("papi_read_only_store", () -> new Topology()
            .addReadOnlyStateStore(kv("ro-store", true), "RoSource", null, Serdes.String().deserializer(),
                Serdes.String().deserializer(), "ro-topic", "RoProcessor",
                () -> new Processor<String, String, Void, Void>() {
                    @Override
                    public void process(final Record<String, String> record) { }
                })
            .addSource("Main", "main-in")
            .addProcessor("Reader", noop(), "Main")
            .connectProcessorAndStateStores("Reader", "ro-store"));
        papi("papi_pattern_and_extractor", () -> new Topology()
            .addSource("PatternSource", Pattern.compile("sensor-[0-9]+"))
            .addProcessor("Route", noop(), "PatternSource")
            .addSink("DynamicSink", (k, v, ctx) -> "routed-" + ctx.topic(), "Route"));
        papi("papi_disconnected", () -> new Topology()
            .addSource("S1", "x1")
            .addSink("K1", "y1", "S1")
            .addSource("S2", "x2")
            .addProcessor("P2", noop(), "S2")
            .addSink("K2", "y2", "P2")
            .addSource("S3", "x3")
            .addProcessor("P3", noop(), "S3"));
    }

    @SuppressWarnings("unchecked")
    static <K, V> ProcessorSupplier<K, V, Void, Void> noopTyped() {
        return () -> new Processor<K, V, Void, Void>() {
            @Override
            public void process(final Record<K, V> record) { }
        };
    }

    public static void main(final String[] args) throws Exception {
        final Path out = Paths.get(args.length > 0 ? args[0] : "tests/capture/data/describe");
        Files.createDirectories(out);
        for (final Case c : CASES) {
            final Topology topology = c.topology.get();
            final TopologyDescription description = topology.describe();
            Files.write(out.resolve(c.name + ".txt"), description.toString().getBytes(StandardCharsets.UTF_8));
            Files.write(out.resolve(c.name + ".expected.json"),
                expected(c, topology, description).getBytes(StandardCharsets.UTF_8));
            System.out.println("wrote " + c.name);
        }
    }

    static String expected(final Case c, final Topology topology, final TopologyDescription description)
            throws Exception {
        final Field field = Topology.class.getDeclaredField("internalTopologyBuilder");
        field.setAccessible(true);
        final InternalTopologyBuilder builder = (InternalTopologyBuilder) field.get(topology);
        builder.setApplicationId(APP);
        builder.setStreamsConfig(new StreamsConfig(props(c.optimize)));
        final ProcessorTopology built = builder.buildTopology();
        final Map<String, String> storeToChangelog = new TreeMap<>(built.storeToChangelogTopic());

        final Map<Integer, Set<String>> storesById = new TreeMap<>();
        for (final TopologyDescription.Subtopology s : description.subtopologies()) {
            final Set<String> stores = new TreeSet<>();
            for (final TopologyDescription.Node node : s.nodes()) {
                if (node instanceof TopologyDescription.Processor) {
                    stores.addAll(((TopologyDescription.Processor) node).stores());
                }
            }
            storesById.put(s.id(), stores);
        }

        final Field idField = TopologyMetadata.Subtopology.class.getDeclaredField("nodeGroupId");
        idField.setAccessible(true);
        final Map<Integer, InternalTopologyBuilder.TopicsInfo> infos = new TreeMap<>();
        for (final Map.Entry<TopologyMetadata.Subtopology, InternalTopologyBuilder.TopicsInfo> e
                : builder.subtopologyToTopicsInfo().entrySet()) {
            infos.put((Integer) idField.get(e.getKey()), e.getValue());
        }

        final StringBuilder sb = new StringBuilder();
        sb.append("{\n  \"application_id\": ").append(str(APP)).append(",\n");
        sb.append("  \"optimization\": ").append(str(c.optimize ? "all" : "none")).append(",\n");
        sb.append("  \"subtopologies\": [");
        boolean first = true;
        for (final Map.Entry<Integer, InternalTopologyBuilder.TopicsInfo> e : infos.entrySet()) {
            final InternalTopologyBuilder.TopicsInfo info = e.getValue();
            final Set<String> stores = storesById.getOrDefault(e.getKey(), new TreeSet<>());
            final Map<String, Object> storeChangelogs = new TreeMap<>();
            for (final String store : stores) {
                storeChangelogs.put(store, storeToChangelog.get(store));
            }
            final Map<String, Object> repartition = new TreeMap<>();
            for (final Map.Entry<String, InternalTopicConfig> r : info.repartitionSourceTopics.entrySet()) {
                final Optional<Integer> n = r.getValue().numberOfPartitions();
                repartition.put(r.getKey(), n.isPresent() ? n.get() : null);
            }
            sb.append(first ? "\n" : ",\n");
            first = false;
            sb.append("    {\"id\": ").append(e.getKey())
                .append(", \"source_topics\": ").append(list(info.sourceTopics))
                .append(", \"repartition_source_topics\": ").append(map(repartition))
                .append(", \"stores\": ").append(list(stores))
                .append(", \"store_changelogs\": ").append(map(storeChangelogs))
                .append(", \"changelog_topics\": ").append(list(info.stateChangelogTopics.keySet()))
                .append(", \"sink_topics\": ").append(list(info.sinkTopics))
                .append("}");
        }
        sb.append("\n  ],\n  \"global_stores\": [");
        first = true;
        for (final TopologyDescription.GlobalStore g : description.globalStores()) {
            sb.append(first ? "" : ", ");
            first = false;
            sb.append("{\"id\": ").append(g.id())
                .append(", \"source_topics\": ").append(list(g.source().topicSet()))
                .append(", \"stores\": ").append(list(g.processor().stores()))
                .append("}");
        }
        sb.append("],\n  \"copartition_groups\": [");
        final TreeSet<String> groups = new TreeSet<>();
        for (final Set<String> group : builder.copartitionGroups()) {
            groups.add(list(group));
        }
        sb.append(String.join(", ", groups));
        sb.append("]\n}\n");
        return sb.toString();
    }

    static String str(final String s) {
        final StringBuilder sb = new StringBuilder("\"");
        for (final char ch : s.toCharArray()) {
            if (ch == '"' || ch == '\\') {
                sb.append('\\').append(ch);
            } else if (ch < 0x20) {
                sb.append(String.format("\\u%04x", (int) ch));
            } else {
                sb.append(ch);
            }
        }
        return sb.append('"').toString();
    }

    static String list(final Collection<String> values) {
        final List<String> parts = new ArrayList<>();
        for (final String v : new TreeSet<>(values)) {
            parts.add(str(v));
        }
        return "[" + String.join(", ", parts) + "]";
    }

    static String map(final Map<String, Object> values) {
        final List<String> parts = new ArrayList<>();
        for (final Map.Entry<String, Object> e : values.entrySet()) {
            final Object v = e.getValue();
            parts.add(str(e.getKey()) + ": " + (v == null ? "null" : v instanceof String ? str((String) v) : v));
        }
        return "{" + String.join(", ", parts) + "}";
    }
}
