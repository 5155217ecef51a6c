"""Every row check, on one bucket full of bad rows (fleet.bucket without the engine; no Spark)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from taskassign.fleet import reasons as R
from taskassign.fleet.bucket import BucketResult, bucket_table, process_bucket
from taskassign.fleet.checks import _blank
from taskassign.fleet.tables import INPUT_TABLES
from taskassign.ids import ProcessId, TaskId
from taskassign.wire.subscription_info import SubscriptionInfo
from tests.fleet.snapshots import APP, PID_1, base_rows

CODE, REASON = "reject_code", "reject_reason"

BAD_TOPOLOGY = "bad-topology"
GOOD_PID = "00000000-0000-0000-0000-0000000000aa"
SUB_PID = "00000000-0000-0000-0000-0000000000bb"


def subscription(pid: str, offsets: dict[str, int], host: str = "sub.svc:7070") -> bytes:
    return SubscriptionInfo.of(11, ProcessId(pid), {TaskId.parse(t): o for t, o in offsets.items()},
                               user_endpoint=host).encode()


def _bad_rows() -> dict[str, list[dict[str, Any]]]:
    rows = base_rows()
    app = rows["applications"][0]
    sub = rows["subtopologies"][1]
    tp = rows["topic_partitions"][2]
    member = rows["members"][2]
    task = rows["member_tasks"][1]
    rows["applications"] += [
        {**app, "app_id": "dup"}, {**app, "app_id": "dup"}, {**app, "app_id": " "},
        {**app, "app_id": "neg-clock", "now_ms": -5}, {**app, "app_id": "bad-leader", "leader_process_id": "zzz"},
        {**app, "app_id": "bad-config", "configs": {"num.standby.replicas": "x"}},
        {**app, "app_id": "bad-assignor", "assignor": "no-such-assignor"},
        {**app, "app_id": "missing-topic"}, {**app, "app_id": "no-members"}, {**app, "app_id": BAD_TOPOLOGY},
    ]
    # Bad topology and metadata rows belong to an application of their own: they make it INCOMPLETE_TOPOLOGY.
    bad = {"app_id": BAD_TOPOLOGY}
    rows["subtopologies"] += [
        {**sub, **bad, "subtopology": -1, "source_topics": ["t-neg"]},
        {**sub, **bad, "subtopology": 5, "source_topics": ["t5"]},
        {**sub, **bad, "subtopology": 5, "source_topics": ["t5b"]},
        {**sub, **bad, "subtopology": 6, "source_topics": []},
        {**sub, **bad, "subtopology": 7, "source_topics": ["t7"], "changelog_topics": ["t7-changelog"]},
        {**sub, **bad, "subtopology": 8, "source_topics": ["t8"], "copartition_groups": [["t8", "elsewhere"]]},
        {**sub, "app_id": "ghost"}, {**sub, "app_id": "bad-config"},
        {**sub, "app_id": "missing-topic", "source_topics": ["absent"]},
        {**sub, "app_id": "no-members", "source_topics": ["nm-in"]},
    ]
    rows["repartition_topics"] += [
        {"app_id": APP, "topic": "nobody-reads-me", "num_partitions": None},
        {**bad, "topic": "clicks", "num_partitions": 0},
    ]
    rows["topic_partitions"] += [
        {**tp, **bad, "partition": -1}, {**tp, **bad, "partition": 7, "end_offset": -3},
        {**tp, **bad, "topic": "dup-t", "partition": 0}, {**tp, **bad, "topic": "dup-t", "partition": 0},
        {**tp, "topic": "unrelated", "partition": 0}, {**tp, "app_id": "no-members", "topic": "nm-in"},
        {**tp, **bad, "replica_racks": ["r1", ""], "partition": 9},
    ]
    rows["members"] += [
        {**member, "consumer_id": "bad-pid", "process_id": "zzz"},
        {**member, "consumer_id": "bad-host", "process_id": GOOD_PID, "host": "nohost"},
        {**member, "consumer_id": "many-tags", "process_id": GOOD_PID,
         "client_tags": {f"k{i}": "v" for i in range(6)}},
        {**member, "consumer_id": "dup-c", "process_id": GOOD_PID}, {**member, "consumer_id": "dup-c",
                                                                     "process_id": GOOD_PID},
        {**member, "app_id": "ghost", "consumer_id": "g"},
        {**member, "consumer_id": "sub-ok", "process_id": None, "host": None, "client_tags": None,
         "subscription_info": subscription(SUB_PID, {"0_0": 5, "9_9": 3})},
        {**member, "consumer_id": "sub-garbage", "process_id": None, "subscription_info": b"\x00\x00\x00"},
        {**member, "consumer_id": "sub-conflict", "process_id": GOOD_PID, "host": None,
         "subscription_info": subscription(SUB_PID, {})},
        {**member, "consumer_id": "no-pid", "process_id": None},
    ]
    rows["member_tasks"] += [
        {**task, "task_id": "x1"}, {**task, "consumer_id": "stranger", "task_id": "1_0"},
        {**task, "task_id": "9_9"}, {**task, "consumer_id": "c1-1", "task_id": "7_7", "ownership": "leader"},
        {**task, "consumer_id": "c1-1", "task_id": "0_1", "offset_sum": -7, "ownership": None},
        {**task, "consumer_id": "c2-1", "task_id": "1_0", "ownership": None, "offset_sum": None},
        {**task, "consumer_id": "c1-2", "task_id": "0_1", "ownership": "standby", "offset_sum": -2},
        {**task, "consumer_id": "c1-2", "task_id": "0_0", "ownership": "standby", "offset_sum": 1},
        {**task, "consumer_id": "c1-2", "task_id": "0_0", "ownership": "standby", "offset_sum": 2},
        {**task, "consumer_id": "c1-1", "task_id": "1_0", "ownership": "standby", "offset_sum": 3},
        {**task, "consumer_id": "c1-1", "task_id": "99999999999_0"},
        {**task, "consumer_id": "sub-ok", "task_id": "0_1", "ownership": None, "offset_sum": 7},
        {**task, "consumer_id": "sub-ok", "task_id": "1_0", "ownership": "active", "offset_sum": None},
    ]
    return rows


def bucket(rows: dict[str, list[dict[str, Any]]]) -> BucketResult:
    return process_bucket({n: bucket_table(spec, rows.get(n, [])) for n, spec in INPUT_TABLES.items()},
                          run_engine=False)


@pytest.fixture(scope="module")
def checked() -> BucketResult:
    return bucket(_bad_rows())


def outcomes(result: BucketResult, table: str) -> list[dict[str, Any]]:
    return result.outcomes(table)


def codes_where(rows: list[dict[str, Any]], **match: Any) -> list[str | None]:
    return sorted((r[CODE] or "") for r in rows if all(r.get(k) == v for k, v in match.items()))


def test_applications(checked: BucketResult) -> None:
    rows = outcomes(checked, "applications")
    assert codes_where(rows, app_id=APP) == [""]
    assert codes_where(rows, app_id="dup") == [R.DUPLICATE_KEY] * 2
    assert codes_where(rows, app_id=" ") == [R.MISSING_VALUE]
    assert codes_where(rows, app_id="neg-clock") == [R.BAD_VALUE]
    assert codes_where(rows, app_id="bad-leader") == [R.BAD_PROCESS_ID]
    assert codes_where(rows, app_id="bad-config") == [R.INVALID_CONFIG]
    assert codes_where(rows, app_id="bad-assignor") == [R.UNKNOWN_ASSIGNOR]
    assert codes_where(rows, app_id="missing-topic") == [R.MISSING_SOURCE_TOPIC]
    missing = next(r for r in rows if r["app_id"] == "missing-topic")
    assert "absent" in missing[REASON]
    # An application without members passes the row checks; the engine rejects it (INVALID_STATE).
    assert codes_where(rows, app_id="no-members") == [""]
    (incomplete,) = [r for r in rows if r["app_id"] == BAD_TOPOLOGY]
    assert incomplete[CODE] == R.INCOMPLETE_TOPOLOGY
    assert incomplete[REASON].startswith("its subtopologies row (subtopology -1) cannot be used (BAD_VALUE: ")


def test_subtopologies(checked: BucketResult) -> None:
    rows = outcomes(checked, "subtopologies")
    assert codes_where(rows, app_id=APP, subtopology=0) == [""]
    assert codes_where(rows, subtopology=-1) == [R.BAD_VALUE]
    assert codes_where(rows, subtopology=5) == [R.DUPLICATE_KEY] * 2
    assert codes_where(rows, subtopology=6) == [R.MISSING_VALUE]
    assert codes_where(rows, subtopology=7) == [R.BAD_VALUE]
    assert codes_where(rows, subtopology=8) == [R.BAD_VALUE]
    assert codes_where(rows, app_id="ghost") == [R.UNKNOWN_APPLICATION]
    assert codes_where(rows, app_id="bad-config") == [R.APPLICATION_REJECTED]
    assert codes_where(rows, app_id="missing-topic") == [R.APPLICATION_REJECTED]


def test_repartition_topics(checked: BucketResult) -> None:
    rows = outcomes(checked, "repartition_topics")
    assert codes_where(rows, topic="nobody-reads-me") == [R.UNREFERENCED_TOPIC]
    assert codes_where(rows, topic="clicks") == [R.BAD_VALUE]


def test_topic_partitions(checked: BucketResult) -> None:
    rows = outcomes(checked, "topic_partitions")
    assert codes_where(rows, app_id=APP, topic="orders") == ["", ""]
    assert codes_where(rows, partition=-1) == [R.BAD_VALUE]
    assert codes_where(rows, partition=7) == [R.BAD_VALUE]
    assert codes_where(rows, partition=9) == [R.BAD_VALUE]
    assert codes_where(rows, topic="dup-t") == [R.DUPLICATE_KEY] * 2
    assert codes_where(rows, topic="unrelated") == [R.UNREFERENCED_TOPIC]
    assert codes_where(rows, app_id="no-members") == [""]


def test_members(checked: BucketResult) -> None:
    rows = outcomes(checked, "members")
    assert codes_where(rows, app_id=APP, process_id=PID_1) == ["", ""]
    assert codes_where(rows, consumer_id="bad-pid") == [R.BAD_PROCESS_ID]
    assert codes_where(rows, consumer_id="bad-host") == [R.BAD_VALUE]
    assert codes_where(rows, consumer_id="many-tags") == [R.BAD_VALUE]
    assert codes_where(rows, consumer_id="dup-c") == [R.DUPLICATE_KEY] * 2
    assert codes_where(rows, app_id="ghost") == [R.UNKNOWN_APPLICATION]


def test_members_with_subscription_bytes(checked: BucketResult) -> None:
    rows = outcomes(checked, "members")
    ok = next(r for r in rows if r["consumer_id"] == "sub-ok")
    assert ok[CODE] is None and (ok["process_id"], ok["host"]) == (SUB_PID, "sub.svc:7070")
    garbage = next(r for r in rows if r["consumer_id"] == "sub-garbage")
    assert garbage[CODE] == R.MALFORMED_ROW and "subscription_info" in garbage[REASON]
    assert codes_where(rows, consumer_id="sub-conflict") == [R.BAD_VALUE]
    assert codes_where(rows, consumer_id="no-pid") == [R.MISSING_VALUE]
    reports = outcomes(checked, "member_tasks")
    decoded = {r["task_id"]: r for r in reports if r["_from_subscription"]}
    assert decoded["0_0"][CODE] is None and decoded["0_0"]["offset_sum"] == 5
    assert decoded["9_9"][CODE] == R.UNKNOWN_TASK
    assert codes_where(reports, consumer_id="sub-ok", task_id="0_1") == [R.BAD_VALUE]  # offsets come from bytes
    assert codes_where(reports, consumer_id="sub-ok", task_id="1_0") == [""]  # ownership rows are fine


def test_member_tasks(checked: BucketResult) -> None:
    rows = outcomes(checked, "member_tasks")
    assert codes_where(rows, task_id="x1") == [R.BAD_TASK_ID]
    assert codes_where(rows, task_id="99999999999_0") == [R.BAD_TASK_ID]
    assert codes_where(rows, consumer_id="stranger") == [R.UNKNOWN_MEMBER]
    assert codes_where(rows, task_id="9_9", _from_subscription=False) == [R.UNKNOWN_TASK]
    assert codes_where(rows, ownership="leader") == [R.BAD_VALUE]
    assert codes_where(rows, offset_sum=-7) == [R.BAD_VALUE]
    assert codes_where(rows, consumer_id="c2-1", task_id="1_0", offset_sum=None) == [R.MISSING_VALUE]
    assert codes_where(rows, consumer_id="c1-2", task_id="0_1") == [R.INCONSISTENT_REPORT]
    assert codes_where(rows, consumer_id="c1-2", task_id="0_0") == [R.DUPLICATE_KEY] * 2
    assert codes_where(rows, consumer_id="c1-1", task_id="1_0") == [R.BAD_VALUE]  # no changelog, no offset sum
    assert codes_where(rows, consumer_id="c1-1", task_id="0_0") == [""]


def test_every_row_is_kept_and_marked_at_most_once(checked: BucketResult) -> None:
    bad = _bad_rows()
    for table, rows in bad.items():
        kept = [r for r in checked.outcomes(table) if not r.get("_from_subscription")]
        assert len(kept) == len(rows), table
        rejected = sum(1 for r in kept if r[CODE] is not None)
        assert rejected == sum(1 for e in checked.errors if e["table"] == table and e["effect"] == "rejected")


def test_row_order_changes_nothing() -> None:
    rows = _bad_rows()
    reversed_rows = {name: list(reversed(table)) for name, table in rows.items()}
    forward, backward = bucket(rows), bucket(reversed_rows)
    assert sorted(map(repr, forward.errors)) == sorted(map(repr, backward.errors))
    assert forward.inputs == backward.inputs


def test_a_rejected_row_shows_its_values_as_json() -> None:
    rows = base_rows()
    rows["member_tasks"].append({"app_id": APP, "consumer_id": "c1-1", "task_id": "x1", "ownership": "active",
                                 "offset_sum": None})
    (error,) = bucket(rows).errors
    assert (error["table"], error["reason_code"], error["effect"]) == ("member_tasks", R.BAD_TASK_ID, "rejected")
    assert error["source_row"] == ('{"app_id":"orders-app","consumer_id":"c1-1","task_id":"x1",'
                                   '"ownership":"active","offset_sum":null}')


def test_one_bucket_per_application_changes_nothing() -> None:
    """Every check and derivation is per application, so how applications are bucketed cannot matter."""
    rows = _bad_rows()
    apps = sorted({r.get("app_id") or "" for table in rows.values() for r in table})
    together = process_bucket({n: bucket_table(spec, rows.get(n, [])) for n, spec in INPUT_TABLES.items()})
    errors: list[str] = []
    results: list[str] = []
    for app in apps:
        alone = process_bucket({n: bucket_table(spec, [r for r in rows.get(n, []) if (r.get("app_id") or "") == app])
                                for n, spec in INPUT_TABLES.items()})
        errors += map(repr, alone.errors)
        results += (repr({k: v for k, v in r.items() if not k.endswith("_seconds")}) for r in alone.results)
    assert sorted(errors) == sorted(map(repr, together.errors))
    assert sorted(results) == sorted(repr({k: v for k, v in r.items() if not k.endswith("_seconds")})
                                     for r in together.results)


def test_blank_text_is_empty_or_only_spaces_whatever_the_mix() -> None:
    """checks._blank trims only when some value starts with a space: the same answers as Python's strip(" ")
    on columns with and without such values (nulls stay null)."""
    texts = ["", " ", "   ", "a", " a", "a ", "\u00a0", " \t", "\t", None, "rack-a"]
    for column in (texts, [t for t in texts if t is None or not t.startswith(" ")], ["x", "", None]):
        expected = [None if t is None else t.strip(" ") == "" for t in column]
        assert _blank(pa.array(column, pa.string())).to_pylist() == expected
        assert _blank(pa.chunked_array([pa.array(column, pa.string())])).to_pylist() == expected
