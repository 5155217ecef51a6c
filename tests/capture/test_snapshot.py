"""Captured groups as a fleet snapshot: the pipeline's engine, run without Spark on the written files, must
assign every application exactly as ``rebalance_group`` assigns its GROUP.json."""

from __future__ import annotations

import base64
import csv
import functools
import json
import random
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from taskassign.capture import snapshot as snapshot_module
from taskassign.capture.snapshot import (
    MARKER_FILE,
    MAX_CLIENT_TAGS,
    MAX_TAG_KEY,
    MAX_TAG_VALUE,
    SNAPSHOT_FORMAT,
    SnapshotWritten,
    UnsupportedGroupError,
    convert_group,
    group_to_snapshot_rows,
    write_snapshot,
)
from taskassign.errors import UserInputError
from taskassign.fleet import checks
from taskassign.fleet import reasons as R
from taskassign.fleet.application import AppResult
from taskassign.fleet.bucket import BucketResult, bucket_table, process_bucket
from taskassign.fleet.build import build_scenario
from taskassign.fleet.tables import INPUT_TABLES, TableSpec
from taskassign.formats.group import CaptureInfo, GroupSpec, parse_group, read_group
from taskassign.ids import ProcessId
from taskassign.leader.group import GroupRebalanceResult, group_scenario, kafka_member_order, rebalance_group
from taskassign.model import ACTIVE, ApplicationState, KafkaStreamsAssignment
from taskassign.wire import AssignorError, SubscriptionInfo
from tests.group_helpers import group, member, v
from tests.helpers import EXAMPLES_DIR, PID_1, PID_2, PID_3

ASSIGNORS = ("high_availability", "sticky", "legacy_sticky", "fallback_prior", "state_aware")
FORMATS = ("parquet", "csv", "json")
RACKS = ("rack-a", "rack-b", "rack-c")

Doc = dict[str, Any]
Clients = dict[str, tuple[list[str], list[str], int | None]]
Consumers = dict[str, tuple[list[str], list[str], list[str], int | None]]


# -- reading a written snapshot without Spark (what pipeline/read.py gives the buckets) ---------------------------

def read_snapshot(directory: Path) -> dict[str, pa.Table]:
    """Every table of a snapshot as the bucket tables ``process_bucket`` takes."""
    marker = json.loads((directory / MARKER_FILE).read_text(encoding="utf-8"))
    fmt = marker["table_format"]
    return {name: bucket_table(spec, _rows(directory / marker["tables"][name]["file"], spec, fmt))
            for name, spec in INPUT_TABLES.items()}


def _rows(path: Path, spec: TableSpec, fmt: str) -> list[dict[str, Any]]:
    if fmt == "parquet":
        table = pq.read_table(path)
        assert table.column_names == list(spec.column_names)
        rows: list[dict[str, Any]] = table.to_pylist()
        return rows
    if fmt == "json":
        lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        assert all(list(line) == list(spec.column_names) for line in lines)
        return [_typed(line, spec, text=False) for line in lines]
    with path.open(newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        assert reader.fieldnames == list(spec.column_names)
        return [_typed(row, spec, text=True) for row in reader]


def _typed(raw: Mapping[str, Any], spec: TableSpec, *, text: bool) -> dict[str, Any]:
    """A CSV or JSON row in its TableSpec's types: empty CSV cells are null, array and map cells JSON text,
    binary values base64 (docs/pipeline.md)."""
    row: dict[str, Any] = {}
    for c in spec.columns:
        value = raw.get(c.name)
        if value is None or (text and value == ""):
            row[c.name] = None
        elif c.type == "binary":
            row[c.name] = base64.b64decode(value)
        elif text and c.is_complex:
            row[c.name] = json.loads(value)
        elif text and c.type in ("int", "long"):
            row[c.name] = int(value)
        else:
            row[c.name] = value
    return row


def run_fleet(directory: Path, assignor: str) -> BucketResult:
    return process_bucket(read_snapshot(directory), assignor_override=assignor)


# -- the two sides' assignments ---------------------------------------------------------------------------------

def _ids(tasks: Any) -> list[str]:
    return sorted(str(t) for t in tasks)


def _client(a: KafkaStreamsAssignment) -> tuple[list[str], list[str], int | None]:
    active = [t for t, assigned in a.tasks.items() if assigned.type is ACTIVE]
    standby = [t for t, assigned in a.tasks.items() if assigned.type is not ACTIVE]
    return _ids(active), _ids(standby), a.followup_rebalance_deadline


def leader_clients(result: GroupRebalanceResult) -> Clients:
    assert result.failure is None and result.rebalance is not None, result.failure
    return {str(pid): _client(a) for pid, a in result.rebalance.group.clients.items()}


def fleet_clients(result: AppResult) -> Clients:
    assert result["status"] == R.STATUS_ASSIGNED, (result["reason_code"], result["reason"])
    return {c["process_id"]: (sorted(c["active_tasks"]), sorted(c["standby_tasks"]),
                              c["followup_rebalance_deadline_ms"]) for c in result["clients"]}


def leader_consumers(result: GroupRebalanceResult) -> Consumers:
    assert result.rebalance is not None and result.rebalance.group.consumers is not None
    return {consumer: (_ids(share.active), _ids(share.standby), _ids(share.withheld), share.followup_rebalance_deadline)
            for shares in result.rebalance.group.consumers.values() for consumer, share in shares.items()}


def fleet_consumers(result: AppResult) -> Consumers:
    return {c["consumer_id"]: (sorted(c["active_tasks"]), sorted(c["standby_tasks"]), sorted(c["withheld_tasks"]),
                               c["followup_rebalance_deadline_ms"]) for c in result["consumers"]}


# -- groups -------------------------------------------------------------------------------------------------------

@dataclass
class _Sub:
    id: int
    partitions: int
    sources: list[str]
    sinks: list[str] = field(default_factory=list)
    stores: list[str] = field(default_factory=list)
    changelogs: list[str] = field(default_factory=list)
    copartition: list[list[str]] = field(default_factory=list)

    def json(self) -> Doc:
        return {"id": self.id, "source_topics": self.sources, "sink_topics": self.sinks, "stores": self.stores,
                "changelog_topics": self.changelogs, "copartition_groups": self.copartition}


@dataclass
class _Client:
    pid: str
    consumers: list[str]
    rack: str | None
    version: int
    host: str


def random_group(seed: int) -> Doc:
    """A group as a live cluster shows it: several subtopologies (stateless, stateful, joins, source tables,
    repartitioned aggregations with computed or fixed counts, non-logged stores), racks, standbys, client tags,
    mixed subscription versions, and a previous assignment with running and restoring actives, lagging
    standbys and tasks nobody ran. Ownership is regular (a task's partitions owned by the member reporting it)."""
    rng = random.Random(f"snapshot:{seed}")
    subs, repartition = _topology(rng)
    has_racks = rng.random() < 0.7
    topics, ends = _topics(rng, subs, repartition, has_racks)
    standbys = rng.choice((0, 1, 1, 2))
    configs: Doc = {"num.standby.replicas": standbys, "acceptable.recovery.lag": rng.choice((100, 10_000))}
    tagged = standbys > 0 and rng.random() < 0.4
    if tagged:
        configs["rack.aware.assignment.tags"] = ["zone"]
    if has_racks and rng.random() < 0.4:
        configs["rack.aware.assignment.strategy"] = rng.choice(("min_traffic", "balance_subtopology"))
    clients = [_Client(str(uuid.UUID(int=rng.getrandbits(128), version=4)), [], RACKS[i % 3] if has_racks else None,
                       11 if tagged else rng.choice((3, 5, 6, 7, 9, 10, 11)), f"host-{i}:7070")
               for i in range(rng.randint(2, 5))]
    for i, c in enumerate(clients):
        c.consumers = [f"app-{i}-{c.pid[:4]}-StreamThread-{t}-consumer" for t in range(1, rng.randint(1, 3) + 1)]
    owned, offsets = _history(rng, subs, ends, clients, standbys)
    members = []
    for c in clients:
        for consumer in c.consumers:
            info = v(c.version, ProcessId(c.pid), offsets.get(consumer, {}), user_endpoint=c.host,
                     client_tags={"zone": c.rack or "zone-1"} if tagged else None)
            members.append(member(consumer, info, owned.get(consumer, ()), topics=sorted(topics), rack=c.rack))
    rng.shuffle(members)
    return {"format": "taskassign/group/v1", "name": f"random-{seed}", "now_ms": 1_700_000_000_000 + seed,
            "leader": rng.choice(members)["member_id"], "configs": configs,
            "topology": {"subtopologies": [s.json() for s in subs], "repartition_topics": repartition},
            "topics": topics, "members": members}


def _topology(rng: random.Random) -> tuple[list[_Sub], dict[str, int | None]]:
    subs: list[_Sub] = []
    repartition: dict[str, int | None] = {}
    for s in range(rng.randint(1, 4)):
        kind = rng.choice(("stateless", "stateful", "join", "table", "nonlogged") + (("repartition",) * 2 if s else ()))
        n = rng.randint(1, 6)
        topic, store = f"in-{s}", f"store-{s}"
        if kind == "stateless":
            subs.append(_Sub(s, n, [topic]))
        elif kind == "stateful":
            subs.append(_Sub(s, n, [topic], stores=[store], changelogs=[f"app-{store}-changelog"]))
        elif kind == "nonlogged":
            subs.append(_Sub(s, n, [topic], stores=[store]))
        elif kind == "join":
            left, right = f"{topic}-left", f"{topic}-right"
            stores = [f"{store}-left", f"{store}-right"]
            subs.append(_Sub(s, n, [left, right], stores=stores, changelogs=[f"app-{x}-changelog" for x in stores],
                             copartition=[[left, right]]))
        elif kind == "table":
            subs.append(_Sub(s, n, [topic], stores=[store], changelogs=[topic]))
        else:
            rep = f"app-repartition-{s}"
            subs[-1].sinks.append(rep)
            fixed = rng.choice((None, None, rng.randint(1, 6)))
            repartition[rep] = fixed
            subs.append(_Sub(s, fixed or subs[-1].partitions, [rep], stores=[store],
                             changelogs=[f"app-{store}-changelog"]))
    return subs, repartition


def _topics(rng: random.Random, subs: Sequence[_Sub], repartition: Mapping[str, int | None],
            has_racks: bool) -> tuple[Doc, dict[tuple[int, int], int]]:
    def racks() -> list[str] | None:
        return sorted(rng.sample(RACKS, rng.choice((1, 2, 3)))) if has_racks else None

    topics: Doc = {}
    ends: dict[tuple[int, int], int] = {}
    for s in subs:
        for topic in s.sources:
            if topic in repartition and rng.random() < 0.5:
                continue  # not created yet
            parts = []
            for p in range(s.partitions):
                entry: Doc = {"partition": p, "racks": racks(), "end_offset": rng.randint(0, 10**6)}
                if topic in s.changelogs:
                    entry["committed_offset"] = committed = rng.randint(0, 10**5)
                    ends[s.id, p] = ends.get((s.id, p), 0) + committed
                parts.append(entry)
            topics[topic] = {"partitions": parts}
        for topic in s.changelogs:
            if topic in s.sources or rng.random() < 0.1:
                continue  # source-changelog, or created by this rebalance
            parts = []
            for p in range(s.partitions):
                end = rng.randint(0, 10**5)
                ends[s.id, p] = ends.get((s.id, p), 0) + end
                parts.append({"partition": p, "racks": racks(), "end_offset": end})
            topics[topic] = {"partitions": parts}
    return topics, ends


def _history(rng: random.Random, subs: Sequence[_Sub], ends: Mapping[tuple[int, int], int],
             clients: Sequence[_Client], standbys: int) -> tuple[dict[str, list[tuple[str, int]]], dict[str, Doc]]:
    """Owned partitions and offset sums per consumer: each task run by one member of one client (or by
    nobody), running (-2) or restoring (an offset sum, partitions still owned); standbys on other clients."""
    owned: dict[str, list[tuple[str, int]]] = {}
    offsets: dict[str, Doc] = {}
    for s in subs:
        logged = bool(s.changelogs)
        for p in range(s.partitions):
            task, end = f"{s.id}_{p}", ends.get((s.id, p), 0)
            owner = rng.choice([*clients, None])
            if owner is not None:
                consumer = rng.choice(owner.consumers)
                owned.setdefault(consumer, []).extend((t, p) for t in s.sources)
                if logged:  # running, or restoring (its partitions owned already)
                    restored = max(0, end - rng.randint(0, 500))
                    offsets.setdefault(consumer, {})[task] = -2 if rng.random() < 0.8 else restored
                elif owner.version < 7:
                    offsets.setdefault(consumer, {})[task] = -2  # v1-6 list every running task
            if logged:
                others = [c for c in clients if c is not owner]
                for holder in rng.sample(others, min(standbys, len(others))):
                    offsets.setdefault(rng.choice(holder.consumers), {})[task] = max(0, end - rng.randint(0, 2_000))
    return owned, offsets


def shop_group() -> Doc:
    """Hand-made: a join, a computed and a fixed repartition topic, a source table, a topic and changelog
    partitions no task uses, a v5 member whose previous tasks include stateless ones, reports of a task the
    topology does not have, and a restoring active (owned, offset sum >= 0)."""
    subs = [
        _Sub(0, 4, ["orders"], sinks=["shop-rekey-repartition"], stores=["counts"],
             changelogs=["shop-counts-changelog"]),
        _Sub(1, 3, ["left", "right"], sinks=["shop-agg-repartition"], stores=["l", "r"],
             changelogs=["shop-l-changelog", "shop-r-changelog"]),
        _Sub(2, 4, ["shop-rekey-repartition"]),
        _Sub(3, 2, ["shop-agg-repartition"], stores=["agg"], changelogs=["shop-agg-changelog"]),
        _Sub(4, 3, ["prices"], stores=["prices-store"], changelogs=["prices"]),
    ]
    subs[0].copartition = [["left", "right"]]  # declared on another subtopology: the snapshot re-homes it

    def partitions(n: int, **extra: Any) -> Doc:
        return {"partitions": [{"partition": p, "racks": [RACKS[p % 3], RACKS[(p + 1) % 3]], **extra}
                               for p in range(n)]}

    topics = {"orders": partitions(4), "left": partitions(3), "right": partitions(3), "audit-log": partitions(2),
              "prices": partitions(3, committed_offset=700), "shop-rekey-repartition": partitions(4),
              "shop-counts-changelog": partitions(6, end_offset=5_000),
              "shop-l-changelog": partitions(3, end_offset=90), "shop-r-changelog": partitions(3, end_offset=80),
              "shop-agg-changelog": partitions(2, end_offset=1_000)}
    members = [
        member("shop-a-1", v(11, PID_1, {"0_0": -2, "1_0": -2, "3_1": 400}, user_endpoint="a:1"),
               [("orders", 0), ("left", 0), ("right", 0)], rack="rack-a"),
        member("shop-a-2", v(11, PID_1, {"0_1": 4_000, "4_0": -2, "9_0": 5}, user_endpoint="a:1"),
               [("orders", 1), ("prices", 0), ("shop-rekey-repartition", 1)], rack="rack-a"),
        member("shop-b-1", v(5, PID_2, {"0_2": -2, "2_2": -2, "2_3": -2, "3_0": -2, "0_0": 10}, user_endpoint="b:1"),
               [("orders", 2), ("shop-rekey-repartition", 2), ("shop-rekey-repartition", 3),
                ("shop-agg-repartition", 0)], rack="rack-b"),
        member("shop-c-1", v(9, PID_3, {"1_1": -2, "0_1": 3_000, "4_1": 600}, user_endpoint="c:1"),
               [("left", 1), ("right", 1)], rack="rack-c"),
        member("shop-c-2", v(9, PID_3, {}, user_endpoint="c:1"), [], rack="rack-c"),
    ]
    return {"format": "taskassign/group/v1", "name": "shop", "now_ms": 1_700_000_000_000, "leader": "shop-c-2",
            "configs": {"num.standby.replicas": 1, "acceptable.recovery.lag": 500},
            "topology": {"subtopologies": [s.json() for s in subs],
                         "repartition_topics": {"shop-rekey-repartition": None, "shop-agg-repartition": 2}},
            "topics": topics, "members": members}


def unknown_ends_group() -> Doc:
    """End offsets marked unknown: every lag is -3 and the default assignor falls back to keeping actives."""
    doc = group([member("a", v(11, PID_1, {"0_0": -2, "0_1": 40}), [("topic1", 0)]),
                 member("b", v(11, PID_2, {"0_1": -2}), [("topic1", 1)]), member("c", v(11, PID_3))],
                stateful=True, configs={"num.standby.replicas": 1}, end_offsets_unknown=True)
    doc["topics"]["app-store-changelog"]["partitions"][1]["racks"] = ["rack-a"]  # keeps its end offset and racks
    return doc


def new_application_group() -> Doc:
    """Nothing owned or reported yet; the changelog and the repartition topic not created."""
    doc = group([member(f"m{i}", v(11, pid)) for i, pid in enumerate((PID_1, PID_1, PID_2, PID_3))], partitions=5,
                configs={"num.standby.replicas": 2})
    doc["topology"] = {"subtopologies": [
        {"id": 0, "source_topics": ["topic1"], "sink_topics": ["g-rep"]},
        {"id": 1, "source_topics": ["g-rep"], "stores": ["s"], "changelog_topics": ["g-s-changelog"]},
    ], "repartition_topics": {"g-rep": None}}
    return doc


def eager_group() -> Doc:
    """Eager rebalancing with v5 members: nothing owned, previous tasks (stateless ones too) and standby tasks
    reported as task sets."""
    members = [member("e-1", v(5, PID_1, {"0_0": -2, "1_0": -2, "0_1": 3})),
               member("e-2", v(5, PID_1, {"1_1": -2})), member("f-1", v(4, PID_2, {"0_1": -2, "1_2": -2, "0_0": 1}))]
    # an eager group needs a line before 4.0 (KAFKA-18839 removed eager rebalancing)
    doc = group(members, stateful=True, configs={"num.standby.replicas": 1, "taskassign.rebalance.protocol": "eager",
                                                 "kafka.version": "3.9"})
    doc["topology"]["subtopologies"].append({"id": 1, "source_topics": ["topic2"]})
    doc["topics"]["topic2"] = {"partitions": 3}
    return doc


PARITY_GROUPS: dict[str, Callable[[], Doc]] = {
    "orders-app": lambda: json.loads((EXAMPLES_DIR / "groups" / "orders-app.group.json").read_text()),
    "shop": shop_group,
    "unknown-ends": unknown_ends_group,
    "new-app": new_application_group,
    "eager": eager_group,
    # Two threads of one client report task 0_0 differently (each sends its own SubscriptionInfo): Kafka's leader
    # keeps the last in its member order ("a", 50); the snapshot gives every report that value.
    "merged-reports": lambda: group([member("p", v(11, PID_1, {"0_0": -2})), member("a", v(11, PID_1, {"0_0": 50})),
                                     member("b", v(11, PID_2))], stateful=True),
    **{f"random-{seed}": functools.partial(random_group, seed) for seed in range(24)},
}


def specs() -> list[tuple[str, GroupSpec]]:
    return [(app_id, parse_group(build())) for app_id, build in PARITY_GROUPS.items()]


@pytest.fixture(scope="module", params=FORMATS)
def written(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SnapshotWritten]:
    yield write_snapshot(tmp_path_factory.mktemp(f"snapshot-{request.param}"), specs(), format=request.param)


# -- parity ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_the_pipeline_assigns_every_application_as_the_leader_does(written: SnapshotWritten, assignor: str) -> None:
    assert not written.skipped
    fleet = {r["app_id"]: r for r in run_fleet(written.directory, assignor).results}
    assert sorted(fleet) == sorted(PARITY_GROUPS)
    for app_id, spec in specs():
        leader = rebalance_group(spec, assignor)
        assert fleet_clients(fleet[app_id]) == leader_clients(leader), app_id
        assert leader.rebalance is not None
        assert fleet[app_id]["probing_rebalance_needed"] == leader.rebalance.probing_rebalance_needed
        assert fleet[app_id]["assignor"] == leader.assignor, app_id


def test_the_engine_receives_the_leaders_application(written: SnapshotWritten) -> None:
    """Stronger than equal outputs: the Scenario the pipeline builds is the one the leader derives
    (``group_scenario``), but for offset sums of tasks without a changelog, which the pipeline does not take
    (v1-6 members report them; no assignor reads them)."""
    inputs = process_bucket(read_snapshot(written.directory), run_engine=False).inputs
    for app_id, spec in specs():
        built, leader = build_scenario(inputs[app_id]).scenario, group_scenario(spec)
        assert (built.state.tasks, built.state.configs, built.state.now_ms, built.leader_process_id) == (
            leader.state.tasks, leader.state.configs, leader.state.now_ms, leader.leader_process_id), app_id
        assert _clients_view(built.state) == _clients_view(leader.state), app_id


def _clients_view(state: ApplicationState) -> dict[ProcessId, tuple[Any, ...]]:
    return {pid: (c.consumer_client_ids, c.previous_active_tasks, c.previous_standby_tasks, c.host_info,
                  dict(c.client_tags), c.rack_id,
                  {t: o for t, o in c.task_offset_sums.items() if state.tasks[t].has_changelog})
            for pid, c in state.clients.items()}


@pytest.mark.parametrize("assignor", ASSIGNORS)
def test_consumers_match_too_when_no_thread_level_note(written: SnapshotWritten, assignor: str) -> None:
    fleet = {r["app_id"]: r for r in run_fleet(written.directory, assignor).results}
    for app_id, spec in specs():
        assert not any(n.startswith("thread level") for n in written.notes.get(app_id, ())), app_id
        assert fleet_consumers(fleet[app_id]) == leader_consumers(rebalance_group(spec, assignor)), app_id


def test_the_pipeline_rejects_only_what_the_leader_ignores(written: SnapshotWritten) -> None:
    result = run_fleet(written.directory, "high_availability")
    found = sorted({(e["app_id"], e["table"], e["effect"], e["reason_code"]) for e in result.errors})
    assert found == [
        ("shop", "member_tasks", "rejected", R.UNKNOWN_TASK),  # 9_0: the leader warns and ignores it
        ("unknown-ends", "applications", "flagged", R.END_OFFSETS_UNKNOWN),
        ("unknown-ends", "topic_partitions", "rejected", R.MISSING_END_OFFSET),  # the mark itself
    ]
    manifest = json.loads((written.directory / MARKER_FILE).read_text())
    assert manifest["notes"]["shop"] == [
        "topics no task reads or restores from are left out: audit-log",
        "partitions no task uses are left out: shop-counts-changelog-4, shop-counts-changelog-5",
    ]


def test_unknown_end_offsets_fall_back_like_the_leader() -> None:
    spec = parse_group(unknown_ends_group())
    leader = rebalance_group(spec)
    assert leader.assignor.startswith("fallback_prior")
    rows = group_to_snapshot_rows(spec, "u")
    assert [r["end_offset"] for r in rows["topic_partitions"] if r["topic"] == "app-store-changelog"] == [None, 100,
                                                                                                           100]


def test_a_missing_source_topic_stops_both_sides() -> None:
    doc = group([member("a", v(11, PID_1))])
    doc["topology"]["subtopologies"][0]["source_topics"].append("not-there")
    spec = parse_group(doc)
    assert rebalance_group(spec).error_code is AssignorError.INCOMPLETE_SOURCE_TOPIC_METADATA
    rows = group_to_snapshot_rows(spec, "g")
    (result,) = process_bucket({n: bucket_table(s, rows[n]) for n, s in INPUT_TABLES.items()}).results
    assert (result["status"], result["reason_code"]) == (R.STATUS_REJECTED, R.MISSING_SOURCE_TOPIC)


def test_a_running_task_nobody_owns_gets_a_thread_level_note_but_the_same_clients() -> None:
    """Members report running tasks (-2) but list no owned partitions (an old consumer protocol, or members
    that gave everything up before joining): the leader withholds nothing, the pipeline derives ownership."""
    doc = group([member("a1", v(11, PID_1, {"0_0": -2, "0_1": -2})), member("a2", v(11, PID_1)),
                 member("b", v(11, PID_2, {"0_2": -2}))], stateful=True)
    spec = parse_group(doc)
    conversion = convert_group(spec, "g")
    assert any(n.startswith("thread level") for n in conversion.notes)
    (result,) = process_bucket({n: bucket_table(s, list(conversion.rows[n])) for n, s in INPUT_TABLES.items()}).results
    assert fleet_clients(result) == leader_clients(rebalance_group(spec))


# -- the mapping ----------------------------------------------------------------------------------------------------

def test_rows_of_the_example_group() -> None:
    rows = group_to_snapshot_rows(read_group(EXAMPLES_DIR / "groups" / "orders-app.group.json"), "orders-app")
    assert rows["applications"] == [{
        "app_id": "orders-app", "assignor": None, "now_ms": 1_700_000_000_000,
        "configs": {"acceptable.recovery.lag": "10000", "num.standby.replicas": "1"},
        "leader_process_id": "1b6f8a52-0c1e-4a43-9a34-3c2f1a0e9d11"}]
    first = rows["members"][0]
    assert first == {"app_id": "orders-app", "consumer_id": "orders-app-1b6f-StreamThread-1-consumer",
                     "process_id": "1b6f8a52-0c1e-4a43-9a34-3c2f1a0e9d11", "rack": "rack-a",
                     "client_tags": {"zone": "rack-a"}, "host": "10.0.0.5:7070", "subscription_info": None}
    mine = [(r["task_id"], r["ownership"], r["offset_sum"]) for r in rows["member_tasks"]
            if r["consumer_id"] == first["consumer_id"]]
    assert mine == [("0_0", "active", -2), ("0_2", None, 880), ("1_0", "active", None)]


def test_stateless_offsets_of_old_members_become_ownership() -> None:
    """A v1-6 member lists every running task, stateless ones too; the pipeline takes offsets only for tasks
    with a changelog, so the conversion says what the leader makes of them."""
    doc = group([member("a", v(5, PID_1, {"0_0": -2, "0_1": 7}))], partitions=3)
    rows = group_to_snapshot_rows(parse_group(doc), "g")
    assert [(r["task_id"], r["ownership"], r["offset_sum"]) for r in rows["member_tasks"]] == [
        ("0_0", "active", None), ("0_1", "standby", None)]


def test_a_copartition_group_moves_to_the_subtopology_reading_it() -> None:
    rows = group_to_snapshot_rows(parse_group(shop_group()), "shop")
    assert {r["subtopology"]: r["copartition_groups"] for r in rows["subtopologies"]} == {
        0: [], 1: [["left", "right"]], 2: [], 3: [], 4: []}


def test_configs_are_written_as_kafka_text() -> None:
    doc = group([member("a", v(11, PID_1, client_tags={"zone": "z", "host": "h"}))], configs={
        "num.standby.replicas": 2, "rack.aware.assignment.tags": ["zone", "host"], "taskassign.kafka.compat": True,
        "rack.aware.assignment.traffic_cost": None, "taskassign.state_aware.movement_cost": 0.25})
    (app,) = group_to_snapshot_rows(parse_group(doc), "g")["applications"]
    assert app["configs"] == {"num.standby.replicas": "2", "rack.aware.assignment.tags": "zone,host",
                              "taskassign.kafka.compat": "true", "taskassign.state_aware.movement_cost": "0.25"}


def test_a_captured_files_assignor_is_the_applications() -> None:
    """``rebalance`` on a captured file defaults to the assignor Kafka ran; so does the pipeline."""
    spec = read_group(EXAMPLES_DIR / "groups" / "orders-app.group.json")
    captured = replace(spec, capture=CaptureInfo(
        bootstrap_server="localhost:9092", group="orders-app", captured_at_ms=1, group_state="Stable",
        topology_source="t", configs_source="c", leader_source="l", assignor="legacy_sticky"))
    rows = group_to_snapshot_rows(captured, "orders-app")
    assert rows["applications"][0]["assignor"] == "legacy_sticky"
    assert group_to_snapshot_rows(spec, "orders-app")["applications"][0]["assignor"] is None
    (result,) = process_bucket({n: bucket_table(s, rows[n]) for n, s in INPUT_TABLES.items()}).results
    assert result["assignor"] == "legacy_sticky"
    assert fleet_clients(result) == leader_clients(rebalance_group(captured, "legacy_sticky"))


def test_the_member_limits_are_the_pipelines() -> None:
    assert (MAX_CLIENT_TAGS, MAX_TAG_KEY, MAX_TAG_VALUE) == (checks.MAX_CLIENT_TAGS, checks.MAX_TAG_KEY,
                                                             checks.MAX_TAG_VALUE)


# -- what cannot be expressed ---------------------------------------------------------------------------------------

def _two_processes() -> list[Doc]:
    return [member("a", v(11, PID_1)), member("b", v(11, PID_2))]


def _cross_copartition() -> Doc:
    doc = group(_two_processes())
    doc["topology"]["subtopologies"].append({"id": 1, "source_topics": ["topic2"]})
    doc["topology"]["subtopologies"][0]["copartition_groups"] = [["topic1", "topic2"]]
    doc["topics"]["topic2"] = {"partitions": 3}
    return doc


def _wrong_repartition_count() -> Doc:
    doc = group(_two_processes())
    doc["topology"]["subtopologies"][0]["sink_topics"] = ["rep"]
    doc["topology"]["subtopologies"].append({"id": 1, "source_topics": ["rep"]})
    doc["topology"]["repartition_topics"] = {"rep": None}
    doc["topics"]["rep"] = {"partitions": 5}
    return doc


def _short_changelog() -> Doc:
    doc = group(_two_processes(), stateful=True)
    doc["topics"]["app-store-changelog"]["partitions"].pop()
    return doc


def _unknown_ends_all_racked() -> Doc:
    doc = group(_two_processes(), stateful=True, end_offsets_unknown=True)
    for p in doc["topics"]["app-store-changelog"]["partitions"]:
        p["racks"] = ["rack-a"]
    return doc


UNSUPPORTED: dict[str, tuple[Callable[[], Doc], str]] = {
    "future version": (lambda: group([member("a", v(11, PID_1)), member("f", SubscriptionInfo(12, None, 12))]),
                       "version probing"),
    "shutdown": (lambda: group([member("a", v(11, PID_1, error_code=4)), member("b", v(11, PID_2))]),
                 "shut down"),
    # Kafka's leader meets "p" before "a" (a HashMap by member id: kafka_member_order), the pipeline "a" first
    "first member": (lambda: group([member("a", v(11, PID_1), rack="rack-b"),
                                    member("p", v(11, PID_1), rack="rack-a")]), "disagree on rack, host or tags"),
    "unmapped owned": (lambda: group([member("a", v(11, PID_1), [("elsewhere", 0)]), member("b", v(11, PID_2))]),
                       "none maps to a task"),
    "cross co-partition": (_cross_copartition, "spans subtopologies"),
    "repartition count": (_wrong_repartition_count, "exists with 5 partitions, the topology needs 3"),
    "short changelog": (_short_changelog, "has 2 partitions but subtopology 0 has 3 tasks"),
    "unknown ends, racks": (_unknown_ends_all_racked, "known racks"),
    "unknown ends, no changelog": (lambda: group(_two_processes(), end_offsets_unknown=True,
                                                 topology={"subtopologies": [{"id": 0, "source_topics": ["topic1"],
                                                                              "stores": ["s"],
                                                                              "changelog_topics": ["new-cl"]}]}),
                                   "no changelog topic exists"),
    "too many tags": (lambda: group([member("a", v(11, PID_1, client_tags={f"k{i}": "v" for i in range(6)}))]),
                      "has 6 client tags"),
    "long tag": (lambda: group([member("a", v(11, PID_1, client_tags={"zone": "x" * 31}))]), "exceeds Kafka's limits"),
    "missing tag": (lambda: group([member("a", v(11, PID_1, client_tags={"zone": "z"})), member("b", v(10, PID_2))],
                                  configs={"rack.aware.assignment.tags": ["zone"]}), "lacks client tag(s) zone"),
    "bad offset": (lambda: group([member("a", v(11, PID_1, {"0_0": -5}))], stateful=True), "reports offset sum -5"),
    "blank member": (lambda: group([member("  ", v(11, PID_1))]), "is blank"),
    "blank topic": (lambda: group([member("a", v(11, PID_1))], topology={"subtopologies": [
        {"id": 0, "source_topics": ["topic1", " "]}]}), "blank topic or store"),
    "bad endpoint": (lambda: group([member("a", v(11, PID_1, user_endpoint="a:1")),
                                    member("b", v(11, PID_1, user_endpoint="nowhere"))]), "user_endpoint"),
}


@pytest.mark.parametrize("case", sorted(UNSUPPORTED))
def test_what_the_snapshot_cannot_express_is_refused_with_a_reason(case: str, tmp_path: Path) -> None:
    build, expected = UNSUPPORTED[case]
    spec = parse_group(build())
    with pytest.raises(UnsupportedGroupError) as caught:
        convert_group(spec, "g")
    assert expected in caught.value.reason
    assert caught.value.app_id == "g" and str(caught.value).startswith("cannot use group 'g': ")
    result = write_snapshot(tmp_path / "out", [("g", spec), ("orders-app", specs()[0][1])])
    assert [(s.app_id, s.reason) for s in result.skipped] == [("g", caught.value.reason)]
    assert result.applications == ("orders-app",)
    assert json.loads((tmp_path / "out" / MARKER_FILE).read_text())["skipped"] == [
        {"app_id": "g", "reason": caught.value.reason}]


def test_a_snapshot_of_only_unusable_groups_still_has_every_table(tmp_path: Path) -> None:
    build, _ = UNSUPPORTED["future version"]
    result = write_snapshot(tmp_path / "s", [("g", parse_group(build()))], format="json")
    assert result.applications == () and [s.app_id for s in result.skipped] == ["g"]
    assert result.rows == dict.fromkeys(INPUT_TABLES, 0)
    assert all(t.num_rows == 0 for t in read_snapshot(tmp_path / "s").values())


def test_the_leaders_member_order_is_not_the_pipelines() -> None:
    """The premise of "first member" above and of the "merged-reports" parity group; and members listed the other
    way round that agree on what matters are fine."""
    spec = parse_group(UNSUPPORTED["first member"][0]())
    assert [m.member_id for m in kafka_member_order(spec)] == ["p", "a"]
    same = parse_group(group([member("z", v(11, PID_1, {"0_0": -2}), rack="r"), member("a", v(11, PID_1), rack="r")],
                             stateful=True))
    assert convert_group(same, "g").rows["members"]


def test_mixed_versions_up_to_11_are_kept() -> None:
    spec = parse_group(group([member(f"m{n}", v(n, PID_1 if n % 2 else PID_2)) for n in range(1, 12)]))
    assert convert_group(spec, "g").rows["members"]


# -- the directory --------------------------------------------------------------------------------------------------

def _listing(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() if p.is_file() else b"<dir>"
            for p in sorted(directory.rglob("*"))}


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_writer_is_deterministic(fmt: str, tmp_path: Path) -> None:
    groups = specs()
    first = write_snapshot(tmp_path / "one", groups, format=fmt)
    second = write_snapshot(tmp_path / "two", list(reversed(groups)), format=fmt)
    assert _listing(tmp_path / "one") == _listing(tmp_path / "two")
    assert first.rows == second.rows and first.applications == tuple(sorted(PARITY_GROUPS))
    assert sorted(_listing(tmp_path / "one")) == sorted([MARKER_FILE, *first.files.values()])
    again = write_snapshot(tmp_path / "one", groups, format=fmt)  # replacing its own snapshot
    assert _listing(tmp_path / "one") == _listing(tmp_path / "two") and again.rows == first.rows


def test_the_written_counts_are_the_files(tmp_path: Path) -> None:
    result = write_snapshot(tmp_path / "s", specs())
    tables = read_snapshot(tmp_path / "s")
    assert result.rows == {name: t.num_rows for name, t in tables.items()}
    marker = json.loads((tmp_path / "s" / MARKER_FILE).read_text())
    assert marker["format"] == SNAPSHOT_FORMAT and marker["table_format"] == "parquet"
    assert {n: t["rows"] for n, t in marker["tables"].items()} == result.rows


@pytest.mark.parametrize("foreign", ["file", "wrong marker", "extra file"])
def test_a_directory_it_did_not_write_is_left_untouched(foreign: str, tmp_path: Path) -> None:
    target = tmp_path / "snap"
    if foreign == "extra file":
        write_snapshot(target, specs()[:1])
        (target / "README.txt").write_text("mine")
    else:
        target.mkdir()
        (target / "applications.csv").write_text("app_id\nx\n")
        if foreign == "wrong marker":
            (target / MARKER_FILE).write_text(json.dumps({"format": "taskassign/pipeline-manifest/v1", "tables": {}}))
    before = _listing(target)
    with pytest.raises(UserInputError, match="refusing to replace it") as caught:
        write_snapshot(target, specs(), format="csv")
    assert str(target) in str(caught.value)
    assert _listing(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snap"]  # no staging left behind


def test_a_file_is_not_a_directory(tmp_path: Path) -> None:
    (tmp_path / "snap").write_text("x")
    with pytest.raises(UserInputError, match="not a directory"):
        write_snapshot(tmp_path / "snap", specs()[:1])
    assert (tmp_path / "snap").read_text() == "x"


def test_an_empty_directory_and_its_own_snapshot_in_another_format_are_replaced(tmp_path: Path) -> None:
    target = tmp_path / "snap"
    target.mkdir()
    write_snapshot(target, specs()[:2], format="csv")
    result = write_snapshot(target, specs()[:2], format="json")
    assert sorted(p.name for p in target.iterdir()) == sorted([MARKER_FILE, *result.files.values()])
    assert all(name.endswith(".jsonl") for name in result.files.values())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snap"]


def test_a_failed_write_keeps_the_previous_snapshot(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "snap"
    write_snapshot(target, specs()[:1])
    before = _listing(target)

    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(snapshot_module, "to_json_text", broken)
    with pytest.raises(OSError, match="disk full"):
        write_snapshot(target, specs(), format="csv")
    assert _listing(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snap"]


def test_bad_calls(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="unknown snapshot format 'xml'"):
        write_snapshot(tmp_path / "a", specs()[:1], format="xml")
    with pytest.raises(UserInputError, match="given twice"):
        write_snapshot(tmp_path / "b", specs()[:1] * 2)
    assert not list(tmp_path.iterdir())
    with pytest.raises(UnsupportedGroupError, match="application id is blank"):
        convert_group(specs()[0][1], " ")


@pytest.mark.spark
@pytest.mark.slow
def test_the_spark_pipeline_reads_every_format_and_agrees(tmp_path: Path) -> None:
    """The real reader (pipeline/read.py) on the written files, through ``taskassign pipeline run``."""
    pytest.importorskip("pyspark", reason="needs pyspark (pip install 'taskassign[spark]')")
    from typer.testing import CliRunner

    from taskassign.cli import app

    groups = specs()
    expected = {app_id: leader_clients(rebalance_group(spec)) for app_id, spec in groups}
    for fmt in FORMATS:
        write_snapshot(tmp_path / fmt, groups, format=fmt)
        result = CliRunner().invoke(app, ["pipeline", "run", "--input", str(tmp_path / fmt),
                                          "--output", str(tmp_path / f"{fmt}-out")])
        assert result.exit_code == 0, result.output
        found: dict[str, Clients] = {}
        for row in pq.read_table(tmp_path / f"{fmt}-out" / "client_assignments").to_pylist():
            found.setdefault(row["app_id"], {})[row["process_id"]] = (
                sorted(row["active_tasks"]), sorted(row["standby_tasks"]), row["followup_rebalance_deadline_ms"])
        assert found == expected, fmt


def test_the_run_wide_kafka_version_reaches_every_application() -> None:
    """``pipeline run --kafka-version`` (PipelineOptions.kafka_version): every application runs on that line, over
    its own kafka.version; an eager application is then refused by the 4.0+ leader only where the line says so."""
    from tests.helpers import EXAMPLES_DIR

    tables = read_snapshot(EXAMPLES_DIR / "fleet")
    inputs = process_bucket(tables, run_engine=False, kafka_version="3.9").inputs
    assert inputs
    for app in inputs.values():
        assert build_scenario(app, kafka_version="3.9").scenario.state.configs.kafka_version == "3.9"
        assert build_scenario(app).scenario.state.configs.kafka_version == "4.4"
    ran = process_bucket(tables, assignor_override="sticky", kafka_version="4.2")
    default = process_bucket(tables, assignor_override="sticky")
    assert [r["status"] for r in ran.results] == [r["status"] for r in default.results]
    assert any(r["status"] != R.STATUS_REJECTED for r in ran.results)
    bad = process_bucket(tables, kafka_version="9.9")
    assert all(r["status"] == R.STATUS_REJECTED for r in bad.results)
    assert any("kafka.version" in (r["reason"] or "") for r in bad.results)


def test_reports_of_one_task_that_differ_are_written_as_the_leader_merged_them() -> None:
    conversion = convert_group(parse_group(PARITY_GROUPS["merged-reports"]()), "g")
    offsets = {(r["consumer_id"], r["task_id"]): r["offset_sum"] for r in conversion.rows["member_tasks"]}
    assert offsets == {("a", "0_0"): 50, ("p", "0_0"): 50}
    assert any("different offset sums" in n and "0_0" in n for n in conversion.notes)
