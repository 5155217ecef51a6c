"""The derivation stages on hand-made inputs: tasks, partition references, end offsets, lags, outputs."""

from __future__ import annotations

from typing import Any

import pytest

from taskassign.pipeline import stages
from taskassign.pipeline.validate import CODE, REASON

pytestmark = pytest.mark.spark

LONG_MAX = 2**63 - 1
_CHECKED = f"{CODE} string, {REASON} string"


def _rows(df: Any, *keys: str) -> dict[tuple[Any, ...], dict[str, Any]]:
    return {tuple(r[k] for k in keys): r.asDict(recursive=True) for r in df.collect()}


@pytest.fixture(scope="module")
def blocks(spark: Any) -> dict[tuple[Any, ...], dict[str, Any]]:
    resolved = spark.createDataFrame([
        ("a", 0, 3, {"in": 3, "short": 2}, None, None),
        ("a", 1, 2, {"tbl": 2}, None, None),
        ("a", 2, 2, {"x": 2}, None, None),
        ("b", 0, 2, {"bin": 2}, None, None),
        ("c", 0, 1, {"c-in": 1}, None, None),
        ("g", 0, 3, {"gin": 3}, None, None),
        ("bad", None, None, None, "INVALID_TOPOLOGY", "nope"),
    ], "app_id string, subtopology int, num_tasks int, source_counts map<string,int>, error_code string, "
       "error_reason string")
    subs = spark.createDataFrame([
        ("a", 0, ["s0"], ["a-cl"]), ("a", 1, ["t"], ["tbl"]), ("a", 2, ["n"], ["new-changelog"]),
        ("b", 0, ["s"], ["b-cl"]), ("c", 0, ["s1", "s2"], ["cl1", "cl2"]), ("g", 0, [], []),
    ], "app_id string, subtopology int, stores array<string>, changelog_topics array<string>").selectExpr(
        "*", f"cast(null as string) as {CODE}", f"cast(null as string) as {REASON}")

    def tp(app: str, topic: str, p: int, racks: list[str] | None = None, end: int | None = None,
           committed: int | None = None, size: int | None = None) -> tuple[Any, ...]:
        return (app, topic, p, racks, end, committed, size, None, None)

    partitions = spark.createDataFrame([
        *[tp("a", "in", p, ["r1"]) for p in range(3)], *[tp("a", "short", p) for p in range(2)],
        tp("a", "a-cl", 0, ["r2"], 10, size=1), tp("a", "a-cl", 1, None, 20, size=2),
        tp("a", "a-cl", 2, [], 30, size=3),
        tp("a", "tbl", 0, committed=5), tp("a", "tbl", 1), *[tp("a", "x", p) for p in range(2)],
        tp("b", "bin", 0), tp("b", "bin", 1), tp("b", "b-cl", 0, end=7),
        tp("c", "c-in", 0), tp("c", "cl1", 0, end=LONG_MAX - 10, size=LONG_MAX), tp("c", "cl2", 0, end=100, size=5),
        tp("g", "gin", 0, ["r1"]), tp("g", "gin", 2, ["r3"]),
    ], "app_id string, topic string, partition int, replica_racks array<string>, end_offset long, "
       f"committed_offset long, size_bytes long, {_CHECKED}")
    counts = stages.topic_partition_counts(partitions)
    derived = stages.derive_tasks(resolved, subs)
    result = stages.with_unknown_end_offsets(stages.task_end_offsets(derived, partitions, counts))
    return _rows(result, "app_id", "subtopology")


def test_derive_tasks_lists_every_topic_of_a_subtopology(blocks: dict[tuple[Any, ...], dict[str, Any]]) -> None:
    assert set(blocks) == {("a", 0), ("a", 1), ("a", 2), ("b", 0), ("c", 0), ("g", 0)}  # not the failed one
    topics = [(t["topic"], t["is_source"], t["is_changelog"], t["num_partitions"]) for t in blocks["a", 0]["topics"]]
    assert topics == [("a-cl", False, True, 3), ("in", True, False, 3), ("short", True, False, 2)]
    assert [(t["topic"], t["is_source"], t["is_changelog"]) for t in blocks["a", 1]["topics"]] == [("tbl", True, True)]
    assert blocks["a", 0]["num_tasks"] == 3 and blocks["a", 0]["stores"] == ["s0"]


def test_racks_per_partition(blocks: dict[tuple[Any, ...], dict[str, Any]]) -> None:
    by_topic = {t["topic"]: t["racks"] for t in blocks["a", 0]["topics"]}
    assert by_topic["a-cl"] == [["r2"], None, []]
    assert by_topic["in"] == [["r1"]] * 3
    # a topic with a gap in its partitions: partition 1 has no metadata row, so no rack information
    assert blocks["g", 0]["topics"][0]["racks"] == [["r1"], None, ["r3"]]


def test_end_offset_sums(blocks: dict[tuple[Any, ...], dict[str, Any]]) -> None:
    assert blocks["a", 0]["end_offset_sums"] == [10, 20, 30]
    assert blocks["a", 0]["state_bytes"] == [1, 2, 3]
    # source-changelog: the committed offset, 0 when the group never committed
    assert blocks["a", 1]["end_offset_sums"] == [5, 0]
    assert blocks["a", 1]["state_bytes"] == [None, None]
    # a changelog topic absent from the metadata is created by this rebalance: it ends at 0
    assert blocks["a", 2]["end_offset_sums"] == [0, 0]
    # overflow is pinned to Long.MAX_VALUE, as Kafka's leader does
    assert blocks["c", 0]["end_offset_sums"] == [LONG_MAX] and blocks["c", 0]["state_bytes"] == [LONG_MAX]
    assert blocks["g", 0]["state_bytes"] is None  # stateless


def test_a_missing_end_offset_makes_every_lag_of_the_application_unknown(
    blocks: dict[tuple[Any, ...], dict[str, Any]],
) -> None:
    assert blocks["b", 0]["end_offset_missing"] and not blocks["b", 0]["end_offsets_known"]
    assert blocks["b", 0]["end_offset_sums"] == [-3, -3]
    assert all(blocks[k]["end_offsets_known"] for k in blocks if k[0] != "b")


def test_partition_references(spark: Any) -> None:
    resolved = spark.createDataFrame([("a", 0, 3, {"in": 3, "tbl": 2}, None, None)],
                                     "app_id string, subtopology int, num_tasks int, "
                                     "source_counts map<string,int>, error_code string, error_reason string")
    subs = spark.createDataFrame([("a", 0, ["s"], ["tbl", "cl"], None, None)],
                                 f"app_id string, subtopology int, stores array<string>, "
                                 f"changelog_topics array<string>, {_CHECKED}")
    refs = _rows(stages.partition_references(stages.derive_tasks(resolved, subs)), "topic")
    assert {k[0]: (v["limit"], v["needs_end_offset"]) for k, v in refs.items()} == {
        "in": (3, False), "tbl": (3, False), "cl": (3, True)}


def test_client_task_lags_merge_reports_like_kafkas_leader(spark: Any) -> None:
    blocks = spark.createDataFrame([
        ("a", 0, 3, [{"topic": "cl", "is_changelog": True}], [10, 20, 30]),
        ("b", 0, 1, [{"topic": "cl", "is_changelog": True}], [-3]),
    ], "app_id string, subtopology int, num_tasks int, topics array<struct<topic:string,is_changelog:boolean>>, "
       "end_offset_sums array<long>")
    reports = spark.createDataFrame([
        ("a", "P1", "c1", 0, 0, None, -2, None, None),  # c1 runs it ...
        ("a", "P1", "c2", 0, 0, "standby", 7, None, None),  # ... c2 (later consumer id) reported 7: its offset wins
        ("a", "P1", "c1", 0, 1, None, 25, None, None),  # ahead of the changelog (end 20): restore from scratch
        ("a", "P1", "c2", 0, 2, "active", None, None, None),
        ("a", "P2", "d1", 0, 0, None, -3, None, None),
        ("b", "P3", "e1", 0, 0, None, 3, None, None),  # end offsets unknown
    ], f"app_id string, process_id string, consumer_id string, subtopology int, partition int, ownership string, "
       f"offset_sum long, {_CHECKED}")
    lags = _rows(stages.client_task_lags(reports, blocks), "process_id", "partition")
    assert (lags["P1", 0]["ownership"], lags["P1", 0]["offset_sum"], lags["P1", 0]["lag"]) == ("active", 7, 3)
    assert lags["P1", 0]["consumers"] == ["c1", "c2"]
    assert (lags["P1", 1]["ownership"], lags["P1", 1]["lag"]) == ("standby", 20)
    assert (lags["P1", 2]["ownership"], lags["P1", 2]["offset_sum"], lags["P1", 2]["lag"]) == ("active", None, None)
    assert lags["P2", 0]["lag"] == -3 and lags["P2", 0]["ownership"] == "standby"
    assert lags["P3", 0]["lag"] == -3 and lags["P3", 0]["end_offset_sum"] == -3


def test_output_tables_and_fleet_metrics(spark: Any) -> None:
    from pyspark.sql.types import DoubleType

    from taskassign.pipeline.schemas import APP_RESULT, METRIC_COLUMNS

    metrics = {name: 1.0 if isinstance(t, DoubleType) else 1 for name, t in METRIC_COLUMNS} | {"active_load_skew": 0.5}
    client = {"process_id": "P", "rack": "r", "num_threads": 2, "active_tasks": ["0_0"], "standby_tasks": [],
              "followup_rebalance_deadline_ms": None, "records_to_restore": 4, "state_load": 1, "active_moves_in": 0}
    results = spark.createDataFrame([
        {"app_id": "a", "status": "ASSIGNED", "error": "NONE", "metrics": metrics, "clients": [client],
         "consumers": [{"process_id": "P", "consumer_id": "P-1", "active_tasks": ["0_0"], "standby_tasks": [],
                        "withheld_tasks": [], "followup_rebalance_deadline_ms": None}]},
        {"app_id": "b", "status": "KEPT_PREVIOUS", "error": "NONE", "metrics": {**metrics, "tasks": 3},
         "clients": [], "consumers": []},
    ], APP_RESULT)
    earlier = spark.createDataFrame([("c", "INVALID_CONFIG", "bad")], "app_id string, code string, reason string")
    clients = stages.client_assignments(results).collect()
    assert [(r["app_id"], r["num_active"], r["num_standby"], r["records_to_restore"]) for r in clients] == [
        ("a", 1, 0, 4)]
    assert [r["consumer_id"] for r in stages.consumer_assignments(results).collect()] == ["P-1"]
    apps = _rows(stages.app_metrics(results, earlier), "app_id")
    assert apps["c",]["status"] == "REJECTED" and apps["c",]["tasks"] is None
    assert apps["b",]["tasks"] == 3
    fleet = _rows(stages.fleet_metrics(stages.app_metrics(results, earlier)), "metric")
    assert [k[0] for k in fleet] == [name for name, _ in METRIC_COLUMNS]
    assert fleet["tasks",]["apps"] == 2 and fleet["tasks",]["sum"] == 4.0 and fleet["tasks",]["max"] == 3.0
    assert fleet["active_load_skew",]["mean"] == 0.5
