"""The derivations of a bucket on hand-made inputs: tasks, partition references, end offsets, lags."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from taskassign.fleet import reasons as R
from taskassign.fleet.bucket import bucket_table
from taskassign.fleet.build import ClientInput
from taskassign.fleet.derive import (
    Block,
    MemberInfo,
    check_member_references,
    check_partition_references,
    client_inputs,
    partition_references,
    subtopology_blocks,
    task_metadata,
    topic_counts,
)
from taskassign.fleet.marks import Marks
from taskassign.fleet.tables import MEMBER_TASKS, TOPIC_PARTITIONS
from taskassign.leader.partition_grouper import ResolvedSubtopology, ResolvedTopology
from taskassign.model import SortedFrozenSet

LONG_MAX = 2**63 - 1


def tp(app: str, topic: str, p: int, racks: list[str] | None = None, end: int | None = None,
       committed: int | None = None, size: int | None = None) -> dict[str, Any]:
    return {"app_id": app, "topic": topic, "partition": p, "replica_racks": racks, "end_offset": end,
            "committed_offset": committed, "size_bytes": size}


def resolved(*subs: tuple[int, int, dict[str, int]]) -> ResolvedTopology:
    return ResolvedTopology(tuple(ResolvedSubtopology(s, n, counts) for s, n, counts in subs))


def sub_row(sub: int, stores: list[str], changelogs: list[str]) -> dict[str, Any]:
    return {"subtopology": sub, "stores": stores, "changelog_topics": changelogs}


BLOCKS = {
    "a": subtopology_blocks(resolved((0, 3, {"in": 3, "short": 2}), (1, 2, {"tbl": 2}), (2, 2, {"x": 2})),
                            [sub_row(0, ["s0"], ["a-cl"]), sub_row(1, ["t"], ["tbl"]),
                             sub_row(2, ["n"], ["new-changelog"])]),
    "b": subtopology_blocks(resolved((0, 2, {"bin": 2})), [sub_row(0, ["s"], ["b-cl"])]),
    "c": subtopology_blocks(resolved((0, 1, {"c-in": 1})), [sub_row(0, ["s1", "s2"], ["cl1", "cl2"])]),
    "g": subtopology_blocks(resolved((0, 3, {"gin": 3})), [sub_row(0, [], [])]),
}
PARTITIONS = bucket_table(TOPIC_PARTITIONS, [
    *[tp("a", "in", p, ["r1"]) for p in range(3)], *[tp("a", "short", p) for p in range(2)],
    tp("a", "a-cl", 0, ["r2"], 10, size=1), tp("a", "a-cl", 1, None, 20, size=2), tp("a", "a-cl", 2, [], 30, size=3),
    tp("a", "tbl", 0, committed=5), tp("a", "tbl", 1), *[tp("a", "x", p) for p in range(2)],
    tp("b", "bin", 0), tp("b", "bin", 1), tp("b", "b-cl", 0, end=7),
    tp("c", "c-in", 0), tp("c", "cl1", 0, end=LONG_MAX - 10, size=LONG_MAX), tp("c", "cl2", 0, end=100, size=5),
    tp("g", "gin", 0, ["r1"]), tp("g", "gin", 2, ["r3"]),
])


def metadata() -> dict[str, Any]:
    usable = np.ones(PARTITIONS.num_rows, dtype=np.bool_)
    found = task_metadata(PARTITIONS, BLOCKS, topic_counts(PARTITIONS, usable))
    return {(app, s["subtopology"]): {**s, "end_offsets_known": m.end_offsets_known}
            for app, m in found.items() for s in m.subtopologies}


def test_blocks_list_every_topic_of_a_subtopology() -> None:
    a0, a1, _ = BLOCKS["a"]
    assert a0.topics == (("a-cl", False, True, 3), ("in", True, False, 3), ("short", True, False, 2))
    assert a1.topics == (("tbl", True, True, 2),)  # a source-changelog topic: one entry, both flags
    assert (a0.num_tasks, a0.stores, a0.logged) == (3, ("s0",), True)
    assert not BLOCKS["g"][0].logged


def test_racks_per_partition() -> None:
    blocks = metadata()
    by_topic = {t["topic"]: t["racks"] for t in blocks["a", 0]["topics"]}
    # each distinct rack list is one set for the whole bucket (fleet.build takes them as they are)
    assert by_topic["a-cl"] == [SortedFrozenSet(["r2"]), None, SortedFrozenSet()]
    assert by_topic["in"] == [SortedFrozenSet(["r1"])] * 3
    assert by_topic["in"][0] is by_topic["in"][2] is blocks["g", 0]["topics"][0]["racks"][0]
    # a topic with a gap in its partitions: partition 1 has no metadata row, so no rack information
    assert blocks["g", 0]["topics"][0]["racks"] == [SortedFrozenSet(["r1"]), None, SortedFrozenSet(["r3"])]


def test_end_offset_sums() -> None:
    blocks = metadata()
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
    assert blocks["g", 0]["end_offset_sums"] == [0, 0, 0]


def test_a_missing_end_offset_makes_every_lag_of_the_application_unknown() -> None:
    blocks = metadata()
    assert not blocks["b", 0]["end_offsets_known"]
    assert blocks["b", 0]["end_offset_sums"] == [-3, -3]
    assert all(blocks[k]["end_offsets_known"] for k in blocks if k[0] != "b")


def test_partition_references_and_their_checks() -> None:
    blocks = {"a": [Block(0, 3, ("s",), (("cl", False, True, 3), ("in", True, False, 3), ("tbl", True, True, 2)))]}
    refs = partition_references(blocks)
    assert refs == {("a", "in"): (3, False), ("a", "tbl"): (3, False), ("a", "cl"): (3, True)}
    table = bucket_table(TOPIC_PARTITIONS, [tp("a", "in", 2), tp("a", "in", 3), tp("a", "cl", 0),
                                            tp("a", "cl", 1, end=4), tp("a", "other", 0), tp("z", "in", 0)])
    marks = Marks(table.num_rows)
    check_partition_references(table, marks, refs)
    codes = [marks.code_of(i) if not marks.usable[i] else None for i in range(table.num_rows)]
    assert codes == [None, R.UNREFERENCED_TOPIC, R.MISSING_END_OFFSET, None, R.UNREFERENCED_TOPIC,
                     R.UNREFERENCED_TOPIC]


def _reports(rows: list[tuple[str, str, str, str | None, int | None, bool]]) -> pa.Table:
    table = bucket_table(MEMBER_TASKS, [{"app_id": a, "consumer_id": c, "task_id": t, "ownership": o, "offset_sum": s}
                                        for a, c, t, o, s, _ in rows])
    parts = [t.split("_") for _, _, t, *_ in rows]
    return (table.append_column("_from_subscription", pa.array([r[5] for r in rows]))
            .append_column("subtopology", pa.array([int(p[0]) for p in parts], pa.int32()))
            .append_column("partition", pa.array([int(p[1]) for p in parts], pa.int32())))


def test_member_references() -> None:
    blocks = {"a": [Block(0, 2, ("s",), (("cl", False, True, 2),)), Block(1, 1, (), (("in", True, False, 1),))]}
    members = {("a", "c1"): MemberInfo("P1", False), ("a", "s1"): MemberInfo("P2", True)}
    reports = _reports([("a", "c1", "0_1", None, 5, False), ("a", "zz", "0_0", "active", None, False),
                        ("a", "c1", "0_2", "active", None, False), ("a", "c1", "1_0", None, 3, False),
                        ("a", "s1", "0_0", None, 3, False), ("a", "s1", "0_0", None, 3, True)])
    marks = Marks(reports.num_rows)
    process_ids = check_member_references(reports, marks, members, blocks)
    codes = [marks.code_of(i) if not marks.usable[i] else None for i in range(reports.num_rows)]
    assert codes == [None, R.UNKNOWN_MEMBER, R.UNKNOWN_TASK, R.BAD_VALUE, R.BAD_VALUE, None]
    assert process_ids.tolist() == ["P1", None, "P1", "P1", "P2", "P2"]


def _rows(client: ClientInput) -> list[dict[str, Any]]:
    """A client's reported tasks, one dict each, from its columns."""
    columns = client.get("task_columns")
    assert columns is not None
    keys = {"subtopology": "subtopologies", "partition": "partitions", "ownership": "ownerships",
            "offset_sum": "offset_sums", "lag": "lags", "consumers": "consumers"}
    return [dict(zip(keys, values, strict=True))
            for values in zip(*(columns[c] for c in keys.values()), strict=True)]  # type: ignore[literal-required]


def test_client_inputs_merge_reports_like_kafkas_leader() -> None:
    members = [{"app_id": "a", "consumer_id": c, "process_id": p, "rack": f"rack-{c}", "client_tags": [("z", c)],
                "host": None} for c, p in (("c2", "P1"), ("c1", "P1"), ("d1", "P2"))]
    reports = _reports([
        ("a", "c1", "0_0", None, -2, False),  # c1 runs it ...
        ("a", "c2", "0_0", "standby", 7, False),  # ... c2 (later consumer id) reported 7: its offset wins
        ("a", "c1", "0_1", None, 25, False),  # ahead of the changelog (end 20): restore from scratch
        ("a", "c2", "0_2", "active", None, False),
        ("a", "d1", "0_0", None, -3, False),
    ])
    process_ids = np.array(["P1", "P1", "P1", "P1", "P2"], dtype=object)
    columns = {name: [m[name] for m in members] for name in members[0]}
    merged = client_inputs(columns, reports, process_ids, {"a": {0: [10, 20, 30]}})
    clients = {c["process_id"]: c for c in merged["a"]}
    p1 = clients["P1"]
    assert (p1["consumers"], p1["rack"], p1["tags"]) == (["c1", "c2"], "rack-c1", [("z", "c1")])
    assert p1["tasks"] is None  # handed over column-wise
    tasks = {t["partition"]: t for t in _rows(p1)}
    assert (tasks[0]["ownership"], tasks[0]["offset_sum"], tasks[0]["lag"], tasks[0]["consumers"]) == (
        "active", 7, 3, ["c1", "c2"])
    assert (tasks[1]["ownership"], tasks[1]["lag"]) == ("standby", 20)
    assert (tasks[2]["ownership"], tasks[2]["offset_sum"], tasks[2]["lag"]) == ("active", None, None)
    (p2_task,) = _rows(clients["P2"])
    assert (p2_task["ownership"], p2_task["lag"]) == ("standby", -3)


def test_an_application_without_partition_rows() -> None:
    empty = bucket_table(TOPIC_PARTITIONS)
    found = task_metadata(empty, {"g": BLOCKS["g"]}, {})
    (sub,) = found["g"].subtopologies
    assert sub["topics"][0]["racks"] == [None, None, None] and found["g"].end_offsets_known


def test_rack_sets_by_masks_match_rack_sets_by_joined_names() -> None:
    """Each row's rack set from the items' codes (bit masks) is the set its joined names give, for any mix of
    lists (empty, null, repeated or unordered names, chunks); names the masks do not take (empty, null, the
    separator, more than 62) go the joined way, so both give the same sets."""
    from taskassign.fleet.codes import TableCodes
    from taskassign.fleet.derive import _joined_rack_sets, _rack_sets

    rng = np.random.default_rng(11)
    for names in (["rack-a", "rack-b", "rack-c"], ["z", "é", "a b", " x"], [f"r{i}" for i in range(70)],
                  ["a", ""], ["a", "b\x1fc"]):
        for _ in range(20):
            rows: list[list[str] | None] = []
            for _ in range(int(rng.integers(0, 60))):
                size = int(rng.integers(0, 5))
                rows.append(None if rng.random() < 0.1 else [names[int(i)] for i in rng.integers(0, len(names), size)])
            if rng.random() < 0.2:
                rows = [["a", None], *rows]  # type: ignore[list-item]  # a null name
            cut = int(rng.integers(0, len(rows) + 1))
            racks = pa.chunked_array([pa.array(rows[:cut], pa.list_(pa.string())),
                                      pa.array(rows[cut:], pa.list_(pa.string()))])
            codes, values = _rack_sets(racks, TableCodes(pa.table({"replica_racks": racks})))
            joined_codes, joined_values = _joined_rack_sets(racks)
            assert [values[c] for c in codes.tolist()] == [joined_values[c] for c in joined_codes.tolist()]
