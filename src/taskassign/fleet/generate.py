"""Synthetic fleet snapshots: many Kafka Streams applications as the pipeline's input tables.

Every application is drawn from its own seeded RNG (``Random(f"{seed}:{index}")``), so application 7
is the same whether the fleet has 10 or 10,000 applications. What varies, as in real fleets:

* size: mostly small applications, some medium, a few large (or about ``tasks_per_app`` tasks each);
* topology: stateless filters, stateful aggregations, co-partitioned joins with two stores, source
  tables (source-changelog topics), repartitioned aggregations (computed or fixed partition counts),
  non-logged stores;
* racks: three racks with two or three replica racks per partition, or no rack information at all;
* configs: 0-2 standbys, rack-aware strategies, client tags (KIP-708), recovery lag thresholds;
* state: skewed changelog end offsets and sizes (a few huge partitions);
* churn since the last rebalance: clients that joined with nothing, clients that left, restoring
  actives, standbys at various lags, stale state on disk, brand-new applications with no history;
* a quarter of the applications' members send their raw SubscriptionInfo bytes (v7-11) instead of
  process id, host, tags and offset-sum rows.

``bad_records`` plants that many faulty rows (unparsable task ids, members of unknown applications,
changelog partitions without end offsets, invalid configs) for demonstrating the errors table.
"""

from __future__ import annotations

import math
import random
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from taskassign.fleet.snapshot_dir import MARKER_FILE, marker_document, replace_snapshot
from taskassign.fleet.snapshot_files import Format, SnapshotWriter, table_file_name
from taskassign.fleet.tables import INPUT_TABLES, OWNERSHIP_ACTIVE, OWNERSHIP_STANDBY
from taskassign.formats.json_io import to_json_text, write_output_text
from taskassign.ids import ProcessId, TaskId
from taskassign.wire.subscription_info import SubscriptionInfo
from taskassign.wire.versions import (
    LATEST_SUPPORTED_VERSION,
    MIN_CLIENT_TAGS_VERSION,
    MIN_VERSION_OFFSET_SUM_SUBSCRIPTION,
)

__all__ = (
    "BAD_RECORD_KINDS",
    "FleetSpec",
    "FleetSummary",
    "GeneratedApp",
    "generate_apps",
    "plant_bad_record",
    "write_fleet",
)

RACKS = ("rack-a", "rack-b", "rack-c")
BASE_TIME_MS = 1_700_000_000_000
_DOMAINS = ("orders", "payments", "clicks", "inventory", "fraud", "shipping", "search", "pricing", "users", "ads")
_ROLES = ("enricher", "aggregator", "joiner", "dedup", "router", "sessionizer", "scorer", "materializer")


@dataclass(frozen=True, slots=True)
class FleetSpec:
    """What to generate: ``apps`` applications; about ``tasks_per_app`` tasks each, or a mix of sizes."""

    apps: int
    seed: int = 0
    tasks_per_app: int | None = None
    bad_records: int = 0

    def __post_init__(self) -> None:
        if self.apps < 1:
            raise ValueError("apps must be >= 1")
        if self.tasks_per_app is not None and self.tasks_per_app < 1:
            raise ValueError("tasks_per_app must be >= 1")
        if self.bad_records < 0:
            raise ValueError("bad_records must be >= 0")


@dataclass(slots=True)
class GeneratedApp:
    """One application's rows, per table, as dicts keyed by column name."""

    app_id: str
    rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


@dataclass(slots=True)
class _Sub:
    id: int
    partitions: int
    sources: list[str]
    sinks: list[str] = field(default_factory=list)
    stores: list[str] = field(default_factory=list)
    changelogs: list[str] = field(default_factory=list)
    copartition: list[list[str]] = field(default_factory=list)


def generate_apps(spec: FleetSpec) -> Iterator[GeneratedApp]:
    """The fleet's applications one at a time (bad records not included: see plant_bad_records)."""
    for index in range(spec.apps):
        yield _generate_app(index, spec)


def _size(rng: random.Random, tasks_per_app: int | None) -> int:
    if tasks_per_app is not None:
        return max(1, round(tasks_per_app * rng.uniform(0.9, 1.1)))
    roll = rng.random()
    low, high = (4, 64) if roll < 0.7 else (64, 512) if roll < 0.95 else (512, 4096)
    return round(math.exp(rng.uniform(math.log(low), math.log(high))))


def _generate_app(index: int, spec: FleetSpec) -> GeneratedApp:
    rng = random.Random(f"{spec.seed}:{index}")
    app_id = f"{rng.choice(_DOMAINS)}-{rng.choice(_ROLES)}-{index:05d}"
    target = _size(rng, spec.tasks_per_app)
    subs, repartition = _topology(rng, app_id, target)
    has_racks = rng.random() < 0.8
    fresh = rng.random() < 0.08  # a brand-new application: nothing owned, changelogs not created yet
    standbys = rng.choices((0, 1, 2), (0.5, 0.4, 0.1))[0]
    configs: dict[str, str] = {"num.standby.replicas": str(standbys)}
    if rng.random() < 0.3:
        configs["acceptable.recovery.lag"] = str(rng.choice((1_000, 5_000, 50_000, 100_000)))
    if has_racks and rng.random() < 0.3:
        configs["rack.aware.assignment.strategy"] = rng.choice(("min_traffic", "balance_subtopology"))
    tagged = has_racks and standbys > 0 and rng.random() < 0.3
    if tagged:
        configs["rack.aware.assignment.tags"] = "zone"
    app = GeneratedApp(app_id, {name: [] for name in (
        "applications", "subtopologies", "repartition_topics", "topic_partitions", "members", "member_tasks")})
    clients = _clients(rng, app_id, target, has_racks)
    leader = rng.choice(clients)["process_id"] if rng.random() < 0.5 else None
    app.rows["applications"].append({
        "app_id": app_id, "assignor": None, "configs": configs,
        "now_ms": BASE_TIME_MS + index * 1_000, "leader_process_id": leader,
    })
    for sub in subs:
        app.rows["subtopologies"].append({
            "app_id": app_id, "subtopology": sub.id, "source_topics": sub.sources, "sink_topics": sub.sinks,
            "stores": sub.stores, "changelog_topics": sub.changelogs, "copartition_groups": sub.copartition,
        })
    for topic, fixed in repartition.items():
        app.rows["repartition_topics"].append({"app_id": app_id, "topic": topic, "num_partitions": fixed})
    ends = _partitions(rng, app, subs, repartition, has_racks, fresh)
    members = _members(rng, app, clients, tagged)
    if not fresh:
        _history(rng, app, subs, ends, clients, members, standbys)
    if rng.random() < 0.25:
        _as_subscription_bytes(rng, app, tagged)
    return app


def _topology(rng: random.Random, app_id: str, target: int) -> tuple[list[_Sub], dict[str, int | None]]:
    count = 1 if target < 8 else rng.randint(1, min(5, max(1, target // 8)))
    weights = [rng.uniform(0.5, 2.0) for _ in range(count)]
    sizes = [max(1, round(target * w / sum(weights))) for w in weights]
    subs: list[_Sub] = []
    repartition: dict[str, int | None] = {}
    for s, size in enumerate(sizes):
        kind = rng.choices(("stateless", "stateful", "join", "table", "repartition", "nonlogged"),
                           (0.25, 0.3, 0.1, 0.1, 0.2 if s else 0.0, 0.05))[0]
        store = f"{kind}-store-{s}"
        changelog = f"{app_id}-{store}-changelog"
        topic = f"{app_id.rsplit('-', 1)[0]}-input-{s}"
        if kind == "stateless":
            subs.append(_Sub(s, size, [topic]))
        elif kind == "stateful":
            subs.append(_Sub(s, size, [topic], stores=[store], changelogs=[changelog]))
        elif kind == "nonlogged":
            subs.append(_Sub(s, size, [topic], stores=[store]))
        elif kind == "join":
            left, right = f"{topic}-left", f"{topic}-right"
            stores = [f"{store}-left", f"{store}-right"]
            subs.append(_Sub(s, size, [left, right], stores=stores,
                             changelogs=[f"{app_id}-{st}-changelog" for st in stores], copartition=[[left, right]]))
        elif kind == "table":
            subs.append(_Sub(s, size, [topic], stores=[store], changelogs=[topic]))
        else:  # the previous subtopology re-keys into a repartition topic this one aggregates
            rep = f"{app_id}-repartition-{s}"
            writer = subs[-1]
            writer.sinks.append(rep)
            fixed = size if rng.random() < 0.3 else None
            repartition[rep] = fixed
            partitions = fixed if fixed is not None else writer.partitions
            subs.append(_Sub(s, partitions, [rep], stores=[store], changelogs=[changelog]))
    return subs, repartition


def _racks(rng: random.Random, has_racks: bool) -> list[str] | None:
    if not has_racks:
        return None
    return sorted(rng.sample(RACKS, rng.choice((2, 3))))


def _partitions(
    rng: random.Random, app: GeneratedApp, subs: list[_Sub], repartition: dict[str, int | None],
    has_racks: bool, fresh: bool,
) -> dict[tuple[int, int], int]:
    """Write topic_partitions; return each task's changelog end-offset sum."""
    rows = app.rows["topic_partitions"]
    ends: dict[tuple[int, int], int] = {}
    for sub in subs:
        for topic in sub.sources:
            if topic in repartition:
                continue
            source_changelog = topic in sub.changelogs
            for p in range(sub.partitions):
                committed = _offset(rng) if source_changelog and not fresh else None
                rows.append({"app_id": app.app_id, "topic": topic, "partition": p,
                             "replica_racks": _racks(rng, has_racks), "end_offset": _offset(rng),
                             "committed_offset": committed,
                             "size_bytes": _size_bytes(rng) if source_changelog else None})
                if committed is not None:
                    ends[(sub.id, p)] = ends.get((sub.id, p), 0) + committed
        for topic in sub.changelogs:
            if topic in sub.sources or fresh:
                continue
            for p in range(sub.partitions):
                end = _offset(rng)
                rows.append({"app_id": app.app_id, "topic": topic, "partition": p,
                             "replica_racks": _racks(rng, has_racks), "end_offset": end,
                             "committed_offset": None, "size_bytes": _size_bytes(rng)})
                ends[(sub.id, p)] = ends.get((sub.id, p), 0) + end
    for topic in repartition:
        if fresh or rng.random() < 0.5:
            continue  # not created yet: the pipeline must cope with repartition topics absent from the metadata
        reader = next(s for s in subs if topic in s.sources)
        for p in range(reader.partitions):
            rows.append({"app_id": app.app_id, "topic": topic, "partition": p,
                         "replica_racks": _racks(rng, has_racks), "end_offset": _offset(rng),
                         "committed_offset": None, "size_bytes": None})
    return ends


def _offset(rng: random.Random) -> int:
    return int(rng.lognormvariate(10, 2.0))


def _size_bytes(rng: random.Random) -> int:
    return int(rng.paretovariate(1.2) * 1_000_000)


def _clients(rng: random.Random, app_id: str, target: int, has_racks: bool) -> list[dict[str, Any]]:
    count = max(1, min(60, round(target / rng.uniform(15, 80)) + rng.randint(0, 2)))
    clients = []
    for c in range(count):
        pid = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        clients.append({
            "process_id": pid,
            "threads": rng.choices((1, 2, 4), (0.4, 0.4, 0.2))[0],
            "rack": RACKS[c % len(RACKS)] if has_racks else None,
            "host": f"{app_id}-{c}.svc:7070",
        })
    return clients


def _members(
    rng: random.Random, app: GeneratedApp, clients: list[dict[str, Any]], tagged: bool
) -> dict[str, list[str]]:
    """Write members; return each process id's consumer ids."""
    consumers: dict[str, list[str]] = {}
    for client in clients:
        pid = client["process_id"]
        ids = [f"{app.app_id}-{pid[:8]}-StreamThread-{t}-consumer" for t in range(1, client["threads"] + 1)]
        consumers[pid] = ids
        tags = {"zone": client["rack"] or "zone-1"} if tagged else {}
        for consumer in ids:
            app.rows["members"].append({
                "app_id": app.app_id, "consumer_id": consumer, "process_id": pid, "rack": client["rack"],
                "client_tags": tags, "host": client["host"], "subscription_info": None,
            })
    return consumers


def _history(
    rng: random.Random, app: GeneratedApp, subs: list[_Sub], ends: dict[tuple[int, int], int],
    clients: list[dict[str, Any]], consumers: dict[str, list[str]], standbys: int,
) -> None:
    """What the members owned and reported: the previous assignment spread over the clients that were
    there (some joined since, some left), plus restoring actives, lagging standbys and stale state."""
    joined = {c["process_id"] for c in clients if rng.random() < 0.15}
    previous = [c["process_id"] for c in clients if c["process_id"] not in joined] or [clients[0]["process_id"]]
    departed = [f"departed-{i}" for i in range(rng.choice((0, 0, 0, 1, 2)))]
    owners = previous + departed
    rows = app.rows["member_tasks"]
    lag_limit = 10_000
    tasks = [(sub, p) for sub in subs for p in range(sub.partitions)]
    rng.shuffle(tasks)
    for i, (sub, p) in enumerate(tasks):
        task_id = f"{sub.id}_{p}"
        logged = bool(sub.changelogs)
        end = ends.get((sub.id, p), 0)
        active = owners[i % len(owners)]
        holders = {active}
        if active in consumers:
            offset = None
            if logged:
                offset = -2 if rng.random() < 0.95 else max(0, end - rng.randint(0, 2 * lag_limit))
            rows.append({"app_id": app.app_id, "consumer_id": rng.choice(consumers[active]), "task_id": task_id,
                         "ownership": OWNERSHIP_ACTIVE, "offset_sum": offset})
        if not logged:
            continue
        others = [o for o in owners if o != active]
        for holder in rng.sample(others, min(standbys, len(others))):
            holders.add(holder)
            if holder not in consumers:
                continue
            lag = int(rng.lognormvariate(6, 2.5)) if rng.random() < 0.7 else rng.randint(0, max(1, end))
            rows.append({"app_id": app.app_id, "consumer_id": rng.choice(consumers[holder]), "task_id": task_id,
                         "ownership": OWNERSHIP_STANDBY, "offset_sum": max(0, end - lag)})
        stale = [c for c in previous if c not in holders]
        if stale and rng.random() < 0.03:
            holder = rng.choice(stale)
            rows.append({"app_id": app.app_id, "consumer_id": rng.choice(consumers[holder]), "task_id": task_id,
                         "ownership": None, "offset_sum": max(0, end - rng.randint(0, max(1, end)))})


def _as_subscription_bytes(rng: random.Random, app: GeneratedApp, tagged: bool) -> None:
    """Members that send their raw SubscriptionInfo (v7-11; v11 when tags are needed) instead of columns:
    process id, host, tags and offset sums move into the bytes; member_tasks keeps the ownership-only rows
    (previous actives without a changelog, which no subscription carries)."""
    version = (MIN_CLIENT_TAGS_VERSION if tagged
               else rng.randint(MIN_VERSION_OFFSET_SUM_SUBSCRIPTION, LATEST_SUPPORTED_VERSION))
    offsets: dict[str, dict[TaskId, int]] = {}
    kept = []
    for row in app.rows["member_tasks"]:
        if row["offset_sum"] is None:
            kept.append(row)
        else:
            offsets.setdefault(row["consumer_id"], {})[TaskId.parse(row["task_id"])] = row["offset_sum"]
    app.rows["member_tasks"] = kept
    for member in app.rows["members"]:
        info = SubscriptionInfo.of(version, ProcessId(member["process_id"]), offsets.get(member["consumer_id"], {}),
                                   user_endpoint=member["host"], client_tags=member["client_tags"])
        member.update(subscription_info=info.encode(), process_id=None, host=None,
                      client_tags=None if version >= MIN_CLIENT_TAGS_VERSION else member["client_tags"])


BAD_RECORD_KINDS = ("task_id", "unknown_app", "end_offset", "config")


def plant_bad_record(app: GeneratedApp, kind: str, rng: random.Random) -> str | None:
    """Make one row of ``app`` faulty in the way ``kind`` names; returns what was planted, or None when
    the application has no row of that kind (no member tasks, no changelog partition)."""
    if kind == "task_id":
        if not app.rows["member_tasks"]:
            return None
        row = rng.choice(app.rows["member_tasks"])
        row["task_id"] = f"x{row['task_id']}"
        return f"{app.app_id}: member_tasks task_id {row['task_id']!r} does not parse"
    if kind == "unknown_app":
        row = dict(rng.choice(app.rows["members"]))
        row["app_id"] = f"{app.app_id}-decommissioned"
        app.rows["members"].append(row)
        return f"{row['app_id']}: members row of an unknown application"
    if kind == "end_offset":
        changelogs = [r for r in app.rows["topic_partitions"] if r["topic"].endswith("-changelog")]
        if not changelogs:
            return None
        row = rng.choice(changelogs)
        row["end_offset"] = None
        return f"{app.app_id}: changelog partition {row['topic']}-{row['partition']} has no end offset"
    configs = app.rows["applications"][0]["configs"]
    app.rows["applications"][0]["configs"] = {**configs, "num.standby.replicas": "-1"}
    return f"{app.app_id}: num.standby.replicas = -1"


@dataclass(frozen=True, slots=True)
class FleetSummary:
    """What ``write_fleet`` wrote."""

    directory: Path
    format: str
    applications: int
    rows: dict[str, int]
    planted: tuple[str, ...]


def write_fleet(
    spec: FleetSpec, directory: str | Path, fmt: Format = "parquet",
    on_app: Callable[[int], None] | None = None,
) -> FleetSummary:
    """Generate the fleet ``spec`` describes into ``directory``: absent, empty, or a snapshot taskassign wrote
    (this generator or ``taskassign capture``), which is replaced as a whole; anything else is refused and
    left untouched (fleet.snapshot_dir). The snapshot carries the marker that says so."""
    target = Path(directory).absolute()
    rng = random.Random(f"{spec.seed}:bad")
    slots: dict[int, list[str]] = {}
    for n in range(spec.bad_records):
        slots.setdefault(rng.randrange(spec.apps), []).append(BAD_RECORD_KINDS[n % len(BAD_RECORD_KINDS)])
    planted: list[str] = []

    def write(staging: Path) -> dict[str, int]:
        carried: list[str] = []  # kinds the application they fell on could not take: the next one gets them
        with SnapshotWriter(staging, fmt) as writer:
            for index, app in enumerate(generate_apps(spec)):
                kinds, carried = carried + slots.get(index, []), []
                for kind in kinds:
                    done = plant_bad_record(app, kind, rng)
                    if done is None:
                        carried.append(kind)
                    else:
                        planted.append(done)
                for table, table_rows in app.rows.items():
                    writer.write(table, table_rows)
                if on_app is not None:
                    on_app(index + 1)
        counts = dict(writer.rows_written)
        files = {name: table_file_name(name, fmt) for name in INPUT_TABLES}
        marker = marker_document("taskassign fleet generate", fmt, files, counts,
                                 fleet={"apps": spec.apps, "seed": spec.seed, "tasks_per_app": spec.tasks_per_app,
                                        "bad_records": spec.bad_records},
                                 planted=list(planted))
        write_output_text(to_json_text(marker), staging / MARKER_FILE)
        return counts

    rows = replace_snapshot(target, "generate", write)
    return FleetSummary(Path(directory), fmt, spec.apps, rows, tuple(planted))
