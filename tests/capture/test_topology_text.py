"""taskassign.capture.topology_text against Kafka's own output.

The fixtures under data/describe/ were written by describe/DescribeTopologies.java with Kafka's jars: for each
topology the text of ``Topology#describe()`` (``<name>.txt``) and what Kafka's InternalTopologyBuilder derives
for application id ``app`` (``<name>.expected.json``: per sub-topology source topics, repartition topics with
the counts the topology fixes, stores and their changelogs, sink topics; global stores; co-partition groups).
These tests only read the saved files, so they run without Java or a broker.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from taskassign.capture.topology_inference import (
    copartition_groups,
    repartition_topics,
    source_table_stores,
    to_group_topology,
)
from taskassign.capture.topology_text import (
    GlobalStore,
    ProcessorNode,
    SinkNode,
    SourceNode,
    TopologyDescription,
    format_topology_description,
    parse_topology_description,
)
from taskassign.errors import ConfigError, TopologyTextError, UserInputError
from taskassign.formats.group import parse_group

DATA = Path(__file__).parent / "data" / "describe"
EXAMPLES = Path(__file__).parents[2] / "examples"
FIXTURES = sorted(p.stem for p in DATA.glob("*.txt"))

# What the caller knows and the text cannot show, per fixture (mirrors DescribeTopologies.java).
OPTIONS: dict[str, dict[str, Any]] = {
    "source_table_optimized": {"source_table_changelogs": True},
    "table_groupby_optimized": {"source_table_changelogs": True},
    "repartition_merge_optimized": {"source_table_changelogs": True},
    "logging_disabled": {"changelog_overrides": {"no-log-store": None}},
    "papi_odd_names": {"changelog_overrides": {"store-1": None}},
    "papi_shared_stores": {"changelog_overrides": {"p3-unlogged": None}},
    "papi_read_only_store": {"changelog_overrides": {"ro-store": "ro-topic"}},
    "repartition_named": {"repartition_partitions": {"x-repartition": 4}},
    "written_and_read_back": {"external_topics": ["staging-repartition"]},
}
# Fixtures with no sub-topology that has a concrete topic (Kafka's expected list is empty too).
NO_TASKS = {"empty", "topic_pattern", "papi_pattern_and_extractor"}
# The one fixture where the inference is knowingly wrong (a join named entirely by the user).
COPARTITION_MISSED = {"user_named_join_missed"}


def text_of(name: str) -> str:
    return (DATA / f"{name}.txt").read_text(encoding="utf-8")


def parsed(name: str) -> TopologyDescription:
    return parse_topology_description(text_of(name), source=f"{name}.txt")


def expected_of(name: str) -> dict[str, Any]:
    result: dict[str, Any] = json.loads((DATA / f"{name}.expected.json").read_text(encoding="utf-8"))
    return result


def group_of(name: str, **options: Any) -> dict[str, Any]:
    return to_group_topology(parsed(name), "app", **{**OPTIONS.get(name, {}), **options}).topology


def by_id(topology: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {s["id"]: s for s in topology["subtopologies"]}


def fails(text: str, line: int, *fragments: str) -> TopologyTextError:
    with pytest.raises(TopologyTextError) as info:
        parse_topology_description(text, source="topology.txt")
    error = info.value
    assert error.line == line, str(error)
    assert str(error).startswith(f"topology.txt:{line}: ")
    for fragment in fragments:
        assert fragment in error.message, str(error)
    return error


# ------------------------------------------------------------------------------------------- every fixture


def test_the_fixtures_are_there() -> None:
    assert len(FIXTURES) >= 40
    for name in FIXTURES:
        assert (DATA / f"{name}.expected.json").is_file(), name


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_round_trips_byte_for_byte(name: str) -> None:
    """Parsing keeps everything Kafka printed: rendering it again gives Kafka's text exactly."""
    description = parsed(name)
    assert format_topology_description(description) == text_of(name)
    assert description.source == f"{name}.txt"


@pytest.mark.parametrize("name", FIXTURES)
def test_fixture_matches_kafkas_topics_info(name: str) -> None:
    """Sub-topologies, topics, stores, changelogs, sinks, repartition topics, co-partition groups and global
    stores are what Kafka's InternalTopologyBuilder derives (given what the text cannot show, OPTIONS)."""
    expected = expected_of(name)
    description = parsed(name)
    assert [(g.id, g.topic, g.store) for g in description.global_stores] == [
        (g["id"], g["source_topics"][0], g["stores"][0]) for g in expected["global_stores"]]
    if name in NO_TASKS:
        assert expected["subtopologies"] == []
        with pytest.raises(TopologyTextError, match="concrete source topic"):
            to_group_topology(description, "app")
        return
    topology = group_of(name)
    got, want = by_id(topology), {s["id"]: s for s in expected["subtopologies"]}
    assert sorted(got) == sorted(want)
    for sid, sub in want.items():
        assert got[sid]["source_topics"] == sub["source_topics"], sid
        assert got[sid]["stores"] == sub["stores"], sid
        assert got[sid]["changelog_topics"] == sub["changelog_topics"], sid
        assert got[sid]["sink_topics"] == sub["sink_topics"], sid
    assert topology["repartition_topics"] == {
        t: n for s in expected["subtopologies"] for t, n in s["repartition_source_topics"].items()}
    groups = sorted(tuple(g) for s in topology["subtopologies"] for g in s["copartition_groups"])
    kafka_groups = sorted(tuple(g) for g in expected["copartition_groups"] if len(g) > 1)
    if name in COPARTITION_MISSED:
        assert groups == [] and kafka_groups == [("requests", "updates")]
    else:
        assert groups == kafka_groups


@pytest.mark.parametrize("name", sorted(set(FIXTURES) - NO_TASKS))
def test_group_topology_is_a_valid_group_file_topology(name: str) -> None:
    doc = json.loads((EXAMPLES / "groups" / "orders-app.group.json").read_text(encoding="utf-8"))
    doc = copy.deepcopy(doc)
    doc["topology"] = group_of(name)
    doc["topics"] = {}
    parse_group(doc, source=f"{name}.txt")



# ------------------------------------------------------------------------------- what the text cannot tell


def test_without_the_callers_knowledge_the_differences_are_the_documented_ones() -> None:
    """With the defaults (nothing known beyond the text), every difference from Kafka is one the module
    docstring lists: logging disabled, read-only stores, optimised source tables, fixed repartition counts,
    a user topic named like an internal one."""
    assert by_id(to_group_topology(parsed("logging_disabled"), "app").topology)[0]["changelog_topics"] == [
        "app-no-log-store-changelog"]
    assert by_id(to_group_topology(parsed("papi_read_only_store"), "app").topology)[0]["changelog_topics"] == [
        "app-ro-store-changelog"]
    assert by_id(to_group_topology(parsed("source_table_optimized"), "app").topology)[0]["changelog_topics"] == [
        "app-tbl-store-changelog"]
    assert to_group_topology(parsed("repartition_named"), "app").topology["repartition_topics"] == {
        "app-x-repartition": None}
    wrong = to_group_topology(parsed("written_and_read_back"), "app").topology
    assert wrong["repartition_topics"] == {"app-staging-repartition": None}
    notes = to_group_topology(parsed("source_table_optimized"), "app").notes
    assert any("source_table_changelogs=True" in n for n in notes)
    assert any("changelog_overrides" in n for n in notes)


def test_optimised_source_tables_use_their_topic_as_changelog() -> None:
    sub = by_id(group_of("repartition_merge_optimized"))[1]
    assert sub["changelog_topics"] == ["app-count-store-changelog", "app-reduce-store-changelog", "lookup"]
    assert source_table_stores(parsed("repartition_merge_optimized").subtopology(1)) == {"lookup-store": "lookup"}
    # Consumed.as("cust"): Source "cust-source", processor "cust"
    assert source_table_stores(parsed("user_named_table_join").subtopologies[0]) == {"cust-store": "customers"}
    # an FK join's response Source is named KTABLE-SOURCE-... but reads an internal topic
    fk = parsed("foreign_key_join")
    assert source_table_stores(fk.subtopology(0), repartition_topics(fk)) == {
        "orders-STATE-STORE-0000000000": "orders"}


def test_fixed_repartition_counts_and_names_with_or_without_the_prefix() -> None:
    d = parsed("repartition_named")
    for key in ("x-repartition", "app-x-repartition"):
        topology = to_group_topology(d, "app", repartition_partitions={key: 4}).topology
        assert topology["repartition_topics"] == {"app-x-repartition": 4}
    with pytest.raises(UserInputError, match="not a repartition topic"):
        to_group_topology(d, "app", repartition_partitions={"in": 4})
    with pytest.raises(UserInputError, match="partition count"):
        to_group_topology(d, "app", repartition_partitions={"x-repartition": 0})


def test_pattern_subscriptions_resolve_when_the_caller_knows_the_topics() -> None:
    d = parsed("topic_pattern")
    assert d.topic_patterns == ("in-.*",)
    topology = to_group_topology(d, "app", pattern_topics={"in-.*": ["in-b", "in-a"]}).topology
    assert by_id(topology)[0]["source_topics"] == ["in-a", "in-b"]
    result = to_group_topology(parsed("topic_pattern_mixed"), "app")
    assert sorted(by_id(result.topology)) == [1]
    assert any("logs-[a-z]+" in n and "pattern_topics" in n for n in result.notes)
    with pytest.raises(UserInputError, match="not a pattern"):
        to_group_topology(d, "app", pattern_topics={"out-.*": ["x"]})


def test_argument_errors() -> None:
    d = parsed("wordcount")
    with pytest.raises(ConfigError, match=r"application\.id"):
        to_group_topology(d, "")
    with pytest.raises(UserInputError, match="not a store"):
        to_group_topology(d, "app", changelog_overrides={"nope": None})


# ---------------------------------------------------------------------------- concrete, derived by hand


def test_wordcount() -> None:
    d = parsed("wordcount")
    assert [s.id for s in d.subtopologies] == [0, 1] and d.global_stores == ()
    s0, s1 = d.subtopologies
    assert s0.source_topics == ("wc-input",) and s0.sink_topics == ("by-word-repartition",)
    assert s1.source_topics == ("by-word-repartition",) and s1.stores == ("counts-store",)
    assert list(s1.nodes_by_name) == [n.name for n in s1.nodes]
    agg = s1.node("KSTREAM-AGGREGATE-0000000003")
    assert agg == ProcessorNode("KSTREAM-AGGREGATE-0000000003", ("counts-store",), ("by-word-repartition-source",),
                                ("KTABLE-TOSTREAM-0000000007",), agg.line)
    assert repartition_topics(d) == ("by-word-repartition",)
    assert group_of("wordcount") == {
        "subtopologies": [
            {"id": 0, "source_topics": ["wc-input"], "stores": [], "changelog_topics": [],
             "sink_topics": ["app-by-word-repartition"], "copartition_groups": []},
            {"id": 1, "source_topics": ["app-by-word-repartition"], "stores": ["counts-store"],
             "changelog_topics": ["app-counts-store-changelog"], "sink_topics": ["wc-output"],
             "copartition_groups": []},
        ],
        "repartition_topics": {"app-by-word-repartition": None},
    }


def test_stream_table_join_after_select_key() -> None:
    s = by_id(group_of("stream_table_join"))
    assert s[0]["source_topics"] == ["app-KSTREAM-KEY-SELECT-0000000004-repartition", "customers"]
    assert s[0]["stores"] == ["customers-STATE-STORE-0000000000"]
    assert s[0]["changelog_topics"] == ["app-customers-STATE-STORE-0000000000-changelog"]
    assert s[0]["copartition_groups"] == [["app-KSTREAM-KEY-SELECT-0000000004-repartition", "customers"]]
    assert s[1]["source_topics"] == ["orders"]
    assert s[1]["sink_topics"] == ["app-KSTREAM-KEY-SELECT-0000000004-repartition"]


def test_foreign_key_join() -> None:
    d = parsed("foreign_key_join")
    assert set(repartition_topics(d)) == {"KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic",
                                          "KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic"}
    s = by_id(group_of("foreign_key_join"))
    assert s[0]["copartition_groups"] == [["app-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-0000000014-topic", "orders"]]
    assert s[1]["copartition_groups"] == [["app-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000006-topic",
                                           "products"]]
    assert s[1]["changelog_topics"] == ["app-KTABLE-FK-JOIN-SUBSCRIPTION-STATE-STORE-0000000010-changelog",
                                        "app-products-STATE-STORE-0000000003-changelog"]
    named = by_id(group_of("foreign_key_join_named"))
    assert named[1]["copartition_groups"] == [["app-fk-subscription-registration-topic", "products"]]
    assert named[0]["stores"] == ["fk-result-store", "orders-store"]


def test_global_stores_are_not_tasks_and_share_the_id_sequence() -> None:
    d = parsed("global_table_between")
    assert [s.id for s in d.subtopologies] == [0, 2, 3]
    assert d.global_stores == (
        GlobalStore(1, SourceNode("KSTREAM-SOURCE-0000000006", ("g1",), None, ("KTABLE-SOURCE-0000000007",), 15),
                    ProcessorNode("KTABLE-SOURCE-0000000007", ("g1-STATE-STORE-0000000005",),
                                  ("KSTREAM-SOURCE-0000000006",), (), 17), 14),
        GlobalStore(4, SourceNode("KSTREAM-SOURCE-0000000017", ("g2",), None, ("KTABLE-SOURCE-0000000018",), 45),
                    ProcessorNode("KTABLE-SOURCE-0000000018", ("g2-store",), ("KSTREAM-SOURCE-0000000017",), (), 47),
                    44),
    )
    result = to_group_topology(d, "app")
    assert sorted(by_id(result.topology)) == [0, 2, 3]
    assert all("g1" not in s["source_topics"] for s in result.topology["subtopologies"])
    assert any("global store 'g2-store'" in n for n in result.notes)
    # a stream-GlobalKTable join reads the global store without listing it, and co-partitions nothing
    assert by_id(group_of("global_table"))[1] == {
        "id": 1, "source_topics": ["users"], "stores": [], "changelog_topics": [],
        "sink_topics": ["users-with-country"], "copartition_groups": []}


def test_joins_co_partition_both_sides_and_merge_transitively() -> None:
    assert by_id(group_of("stream_stream_join_named"))[0]["copartition_groups"] == [["left", "right"]]
    assert by_id(group_of("stream_stream_join_rekeyed"))[2]["copartition_groups"] == [[
        "app-KSTREAM-KEY-SELECT-0000000001-repartition", "app-KSTREAM-KEY-SELECT-0000000003-repartition"]]
    assert by_id(group_of("chained_joins"))[0]["copartition_groups"] == [["s1", "s2", "ta", "tc"]]
    assert by_id(group_of("table_table_join"))[0]["copartition_groups"] == [["table-a", "table-c"]]
    assert by_id(group_of("versioned_table_join"))[0]["copartition_groups"] == [["prices", "trades"]]
    # a self-join constrains nothing: Kafka's one-topic group is dropped
    assert by_id(group_of("stream_self_join"))[0]["copartition_groups"] == []


def test_shared_stores_outside_dsl_joins_are_not_co_partitioned() -> None:
    for name, store in (("papi_shared_stores", "shared-persistent"), ("process_shared_store", "dsl-shared"),
                        ("papi_read_only_store", "ro-store")):
        result = to_group_topology(parsed(name), "app", **OPTIONS.get(name, {}))
        assert all(s["copartition_groups"] == [] for s in result.topology["subtopologies"]), name
        assert any(f"store {store!r} is shared" in n for n in result.notes), name
    assert by_id(group_of("merge_then_aggregate"))[0]["copartition_groups"] == []
    assert by_id(group_of("process_reads_table_store"))[0]["copartition_groups"] == []
    missed = to_group_topology(parsed("user_named_join_missed"), "app")
    assert any("'latest-store' is shared by processors 'answer', 'latest'" in n for n in missed.notes)


def test_cogroup_follows_kafka_and_offers_the_fix() -> None:
    d = parsed("cogroup_named")
    assert copartition_groups(d) == {0: (("cg-a", "cg-c", "cg-d"),)}
    assert copartition_groups(d, kafka_cogroup_sources=False) == {0: (("cg-a", "cg-c", "cg-d-rekeyed-repartition"),)}
    fixed = to_group_topology(d, "app", kafka_cogroup_sources=False).topology
    assert by_id(fixed)[0]["copartition_groups"] == [["app-cg-d-rekeyed-repartition", "cg-a", "cg-c"]]
    assert by_id(group_of("cogroup"))[0]["copartition_groups"] == [["cg-a", "cg-c"]]


def test_patterns_dynamic_sinks_and_multi_topic_sources() -> None:
    d = parsed("papi_pattern_and_extractor")
    (sub,) = d.subtopologies
    assert sub.sources == (SourceNode("PatternSource", (), "sensor-[0-9]+", ("Route",), 3),)
    (sink,) = sub.sinks
    assert sink.topic is None and sink.extractor is not None and sink.extractor.startswith("DescribeTopologies$$")
    assert parsed("papi_multi_source").subtopologies[0].source_topics == ("in-a", "in-c", "in-b")
    notes = to_group_topology(parsed("dynamic_sink"), "app").notes
    assert any("['router']" in n and "TopicNameExtractor" in n for n in notes)


def test_odd_names_are_split_against_the_declared_nodes() -> None:
    (sub,) = parsed("papi_odd_names").subtopologies
    source, none, proc, arrow, sink = sub.nodes
    assert source == SourceNode("source, with comma", ("odd-in",), None, ("none", "proc (stores: [fake])"), 3)
    assert none == ProcessorNode("none", (), ("source, with comma",), ("arrow --> name",), 5)
    assert proc.name == "proc (stores: [fake])" and isinstance(proc, ProcessorNode) and proc.stores == ("store-1",)
    assert arrow == ProcessorNode("arrow --> name", ("store-1",), ("proc (stores: [fake])", "none"),
                                  ("sink <-- x",), 11)
    assert sink == SinkNode("sink <-- x", "odd-out", None, ("arrow --> name",), 14)
    (named,) = parsed("named_odd_characters").subtopologies
    assert named.source_topics == ("odd.topic_name-1",) and named.stores == ("store.with-dots_and_underscores.1",)


def test_a_node_named_none_is_told_from_an_empty_list_by_the_reverse_arrow() -> None:
    text = ("Topologies:\n   Sub-topology: 0\n    Source: S (topics: [t])\n      --> none\n"
            "    Processor: none (stores: [])\n      --> none\n      <-- S\n\n")
    (sub,) = parse_topology_description(text).subtopologies
    assert sub.node("S").successors == ("none",)  # type: ignore[union-attr]
    assert sub.node("none").successors == ()  # type: ignore[union-attr]


# --------------------------------------------------------------------------------------------- framing

WORDCOUNT_LINES = text_of("wordcount").split("\n")


def test_log_lines_around_the_text_are_skipped() -> None:
    text = ("2024-10-25 10:00:00 INFO  [main] WordCount - starting\n"
            "2024-10-25 10:00:01 INFO  [main] WordCount - " + text_of("wordcount")
            + "2024-10-25 10:00:02 INFO  [main] KafkaStreams - State transition from CREATED to REBALANCING\n")
    d = parse_topology_description(text)
    assert format_topology_description(d) == text_of("wordcount")
    assert (d.start_line, d.end_line) == (2, 2 + len(WORDCOUNT_LINES) - 2)


def test_a_common_prefix_on_every_line_is_stripped() -> None:
    prefix = "wordcount-7d9f | "
    text = "\n".join(prefix + line for line in WORDCOUNT_LINES) + "\nwordcount-7d9f exited\n"
    assert format_topology_description(parse_topology_description(text)) == text_of("wordcount")
    indented = "\n".join("    " + line for line in WORDCOUNT_LINES)
    assert format_topology_description(parse_topology_description(indented)) == text_of("wordcount")
    crlf = text_of("wordcount").replace("\n", "\r\n")
    assert format_topology_description(parse_topology_description(crlf)) == text_of("wordcount")


def test_per_line_timestamps_are_refused_with_advice() -> None:
    text = "\n".join(f"10:00:0{i % 10} | {line}" for i, line in enumerate(WORDCOUNT_LINES))
    fails(text, 2, "log prefix", "strip")


def test_the_empty_topology() -> None:
    d = parsed("empty")
    assert d.subtopologies == () and d.global_stores == ()
    assert format_topology_description(d) == "Topologies:\n "


# ------------------------------------------------------------------------------------------- malformed


def test_empty_text_and_no_header() -> None:
    fails("", 1, "empty text", "Topologies:")
    fails("\n  \n", 1, "empty text")
    fails("hello\n   Sub-topology: 0\n", 1, "expected the header 'Topologies:'")
    fails("junk\nTopology: my-topology:\n   Sub-topology: 0\n", 2, "named topolog", "out of scope")


def test_indentation_broken() -> None:
    lines = list(WORDCOUNT_LINES)
    lines[2] = "   " + lines[2].lstrip()  # a Source at 3 spaces
    fails("\n".join(lines), 3, "indentation broken", "4 spaces", "'Source:'")
    lines = list(WORDCOUNT_LINES)
    lines[3] = "     " + lines[3].lstrip()  # an arrow at 5 spaces
    fails("\n".join(lines), 4, "indentation broken", "6 spaces", "'-->'")
    lines = list(WORDCOUNT_LINES)
    lines[4] = lines[4].lstrip()  # a Processor at column 0
    fails("\n".join(lines), 5, "indentation broken")
    lines = list(WORDCOUNT_LINES)
    lines[16] = "      " + lines[16].lstrip()  # Sub-topology at 6 spaces
    fails("\n".join(lines), 17, "indentation broken", "'Sub-topology:'")
    lines = list(WORDCOUNT_LINES)
    lines[2] = "\t" + lines[2].lstrip()
    fails("\n".join(lines), 3)


def test_unknown_node_kind() -> None:
    lines = list(WORDCOUNT_LINES)
    lines[4] = lines[4].replace("Processor:", "Transformer:")
    fails("\n".join(lines), 5, "expected 'Source:', 'Processor:' or 'Sink:'")


def test_duplicate_sub_topology_id() -> None:
    text = text_of("wordcount").replace("Sub-topology: 1", "Sub-topology: 0")
    fails(text, 17, "duplicate sub-topology id 0", "line 2")


def test_arrow_to_an_unknown_node() -> None:
    text = text_of("wordcount").replace("--> KSTREAM-FLATMAPVALUES-0000000001", "--> KSTREAM-FLATMAPVALUE-0000000001")
    fails(text, 4, "arrow to an unknown node", "KSTREAM-FLATMAPVALUE-0000000001")
    # a node of another sub-topology is unknown too: arrows never leave a sub-topology
    text = text_of("wordcount").replace("      --> KTABLE-TOSTREAM-0000000007",
                                        "      --> KTABLE-TOSTREAM-0000000007, by-word")
    fails(text, 21, "arrow to an unknown node", "by-word")


def test_arrows_must_agree_both_ways() -> None:
    text = text_of("wordcount").replace("      <-- KSTREAM-FLATMAPVALUES-0000000001\n    Processor: by-word-",
                                        "      <-- KSTREAM-SOURCE-0000000000\n    Processor: by-word-")
    fails(text, 6, "'KSTREAM-FLATMAPVALUES-0000000001' lists 'by-word' as a successor", "(line 8) does not list")


def test_missing_or_misplaced_arrows_and_specs() -> None:
    lines = list(WORDCOUNT_LINES)
    del lines[6]  # the <-- line of the first processor
    fails("\n".join(lines), 7, "expected '<-- ...'", "KSTREAM-FLATMAPVALUES-0000000001")
    lines = list(WORDCOUNT_LINES)
    lines[4] = "    Processor: KSTREAM-FLATMAPVALUES-0000000001"
    fails("\n".join(lines), 5, "expected 'Processor: NAME (stores: [STORE, ...])'")
    lines = list(WORDCOUNT_LINES)
    lines[13] = "    Sink: by-word-repartition-sink"
    fails("\n".join(lines), 14, "expected 'Sink: NAME (topic: TOPIC)'")
    lines = list(WORDCOUNT_LINES)
    lines[2] = "    Source: KSTREAM-SOURCE-0000000000 (topics: [])"
    fails("\n".join(lines), 3, "at least one topic")
    fails("Topologies:\n   Sub-topology: 0\n\n  Sub-topology: 1\n", 3, "has no node")
    fails("Topologies:\n   Sub-topology: x\n", 2, "expected 'Sub-topology: N'")
    fails("Topologies:\n   Sub-topology: 0 for global tables\n", 2, "for global store")
    fails("Topologies:\n   Sources: x\n", 2, "expected 'Sub-topology: N'")


def test_duplicate_nodes_and_topics() -> None:
    text = text_of("papi_disconnected").replace("Sink: K2 (topic: y2)", "Sink: K1 (topic: y2)").replace(
        "--> K2", "--> K1").replace("Source: S3 (topics: [x3])", "Source: S3 (topics: [x1])")
    fails(text, 14, "duplicate node name 'K1'", "line 5")
    text = text_of("papi_disconnected").replace("Source: S3 (topics: [x3])", "Source: S3 (topics: [x1])")
    fails(text, 18, "topic 'x1' is read by two sources", "line 3")


def test_malformed_global_store() -> None:
    text = text_of("papi_global_store")
    fails(text.replace("(stores: [global-kv])", "(stores: [])"), 14, "exactly one store")
    fails(text.replace("--> GlobalProc", "--> none"), 13, "--> GlobalProc")
    fails(text + "    Sink: S (topic: t)\n      <-- GlobalProc\n", 17, "a Source then a Processor")


# ----------------------------------------------------------------------------------------- properties

_FRAGMENTS = st.sampled_from([
    "Topologies:", "   Sub-topology: 0", "  Sub-topology: 1 for global store (will not generate tasks)",
    "    Source: a (topics: [t])", "    Source: b (topics: x.*)", "    Processor: p (stores: [s])",
    "    Processor: none (stores: [])", "    Sink: k (topic: u)", "    Sink: k (extractor class: X)",
    "      --> p", "      --> none", "      <-- a", "      <-- a, b", "      --> k, p", "", " ", "\t", "Topology: n:",
    "    Source: c, d (topics: [t, u])", "      --> c, d", "  Sub-topology: 99999999999",
])


@settings(max_examples=300)
@given(st.text())
@example("Topologies:\n   Sub-topology: 0\n    Source: a (topics: [t])\n      --> a\n")
@example("Topologies:\n   Sub-topology: 0\n    Processor: p (stores: [s, s])\n      --> none\n      <-- none\n")
def test_garbage_raises_only_topology_text_errors(text: str) -> None:
    _parse_and_convert(text)


@settings(max_examples=300)
@given(st.lists(_FRAGMENTS, max_size=14))
def test_near_misses_raise_only_topology_text_errors(lines: list[str]) -> None:
    _parse_and_convert("\n".join(lines))


@settings(max_examples=200)
@given(st.sampled_from(FIXTURES), st.data())
def test_mutated_fixtures_raise_only_topology_text_errors(name: str, data: st.DataObject) -> None:
    lines = text_of(name).split("\n")
    for _ in range(data.draw(st.integers(1, 3))):
        i = data.draw(st.integers(0, len(lines) - 1))
        action = data.draw(st.sampled_from(["delete", "duplicate", "swap", "indent", "dedent", "edit"]))
        if action == "delete":
            del lines[i]
        elif action == "duplicate":
            lines.insert(i, lines[i])
        elif action == "swap" and i + 1 < len(lines):
            lines[i], lines[i + 1] = lines[i + 1], lines[i]
        elif action == "indent":
            lines[i] = " " + lines[i]
        elif action == "dedent":
            lines[i] = lines[i][1:]
        elif action == "edit":
            j = data.draw(st.integers(0, len(lines[i])))
            lines[i] = lines[i][:j] + data.draw(st.text(max_size=5)) + lines[i][j:]
        if not lines:
            break
    _parse_and_convert("\n".join(lines))


def _parse_and_convert(text: str) -> None:
    try:
        description = parse_topology_description(text)
    except TopologyTextError as error:
        assert error.line >= 1
        return
    rendered = format_topology_description(description)
    assert format_topology_description(parse_topology_description(rendered)) == rendered
    try:
        to_group_topology(description, "app")
    except TopologyTextError as error:
        assert error.line >= 1
