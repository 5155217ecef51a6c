"""Random applications at one rebalance, seeded: the inputs ``taskassign check-assignor`` runs a plug-in on.

Application ``i`` of seed ``s`` is drawn from its own generator (``Random(f"{s}:{i}")``), so it is the same
however many are asked for, and a failing case is named by its seed and index. The applications are small
(1-4 subtopologies of 1-8 partitions, 1-10 clients of 1-3 threads) and aimed at the corners where
assignors break: stateless and stateful subtopologies (some with two stores, some not logged), previous
owners reporting every kind of offset sum (-2 running, -3 unknown, 0, caught up, behind, ahead of the end),
changelog end offsets up to Long.MAX_VALUE, clients that own nothing (new) or hold stale tasks, 0-3
standbys (more than clients can hold, sometimes), warm-up and recovery-lag configs, racks on every client
and partition (sometimes with a rack-aware strategy) or none, client tags for rack-aware standbys
(KIP-708), state sizes given or not, and process ids small and large.

The test suite's Hypothesis strategies (tests/assignors/strategies.py) cover the same ground for Kafka's
own assignors, with shrinking; this generator needs no test dependency, so the product can use it.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from taskassign.configs import UNBOUNDED_RECOVERY_LAG, AssignmentConfigs
from taskassign.formats.scenario import Scenario
from taskassign.ids import ProcessId, TaskId
from taskassign.model import (
    LATEST_OFFSET,
    UNKNOWN_OFFSET_SUM,
    ApplicationState,
    KafkaStreamsState,
    SortedFrozenSet,
    TaskInfo,
    new_task_info,
)
from taskassign.model import TaskTopicPartition as Partition

__all__ = ("RACKS", "random_application", "random_applications")

RACKS = ("rack-a", "rack-b", "rack-c")
ZONES = ("zone-1", "zone-2", "zone-3")
LONG_MAX = 2**63 - 1
#: The leader's clock of every random application (epoch ms).
NOW_MS = 1_700_000_000_000
_END_OFFSETS = (0, 50, 5_000, 100_000, 10**12, LONG_MAX)


def random_applications(count: int, seed: int = 0) -> Iterator[Scenario]:
    """``count`` random applications of ``seed``, named ``random-<seed>-<index>``."""
    if count < 0:
        raise ValueError("count must be >= 0")
    for index in range(count):
        yield random_application(seed, index)


def random_application(seed: int, index: int) -> Scenario:
    """Application ``index`` of ``seed`` (the same whatever else is drawn)."""
    rng = random.Random(f"{seed}:{index}")
    racks = rng.random() < 0.5
    tasks = _tasks(rng, racks)
    configs = _configs(rng, racks)
    clients = _clients(rng, tasks, racks, configs.rack_aware_assignment_tags)
    state = ApplicationState(tasks={t.id: t for t in tasks}, clients={c.process_id: c for c in clients},
                             configs=configs, now_ms=NOW_MS)
    return Scenario(f"random-{seed}-{index}", state, raw_configs=configs.to_properties())


def _rack_ids(rng: random.Random, racks: bool) -> SortedFrozenSet[str] | None:
    return SortedFrozenSet(rng.sample(RACKS, rng.randint(1, len(RACKS)))) if racks else None


def _tasks(rng: random.Random, racks: bool) -> list[TaskInfo]:
    out: list[TaskInfo] = []
    for sub in range(rng.randint(1, 4)):
        kind = rng.choice(("stateless", "logged", "logged", "two-stores", "not-logged"))
        for part in range(rng.randint(1, 8)):
            parts = [Partition(f"source-{sub}", part, True, False, _rack_ids(rng, racks))]
            stores: tuple[str, ...] = ()
            end = 0
            if kind != "stateless":
                stores = (f"store-{sub}",) if kind != "two-stores" else (f"store-{sub}", f"store-{sub}-b")
            if kind in ("logged", "two-stores"):
                for store in stores:
                    parts.append(Partition(f"{store}-changelog", part, False, True, _rack_ids(rng, racks)))
                end = min(LONG_MAX, sum(rng.choice(_END_OFFSETS) for _ in stores))
            state_bytes = rng.choice((None, 0, 1_000, 10**6, 10**9)) if stores else None
            out.append(new_task_info(TaskId(sub, part), stores, parts, end, state_bytes))
    return out


def _configs(rng: random.Random, racks: bool) -> AssignmentConfigs:
    settings: dict[str, Any] = {
        "num_standby_replicas": rng.choice((0, 0, 1, 1, 2, 3)),
        "max_warmup_replicas": rng.randint(1, 3),
        "acceptable_recovery_lag": rng.choice((0, 10, 10_000, UNBOUNDED_RECOVERY_LAG)),
        "rack_aware_assignment_tags": rng.choice(((), (), ("zone",), ("zone", "cluster"))),
    }
    if racks and rng.random() < 0.4:
        settings["rack_aware_assignment_strategy"] = rng.choice(("min_traffic", "balance_subtopology"))
    return AssignmentConfigs(**settings)


def _offset(rng: random.Random, end: int) -> int:
    """-2 (running), -3 (unknown), 0, the end (caught up), just behind, far behind, or ahead of the end."""
    choice = rng.choice(("running", "unknown", "zero", "end", "near", "far", "ahead"))
    return {"running": LATEST_OFFSET, "unknown": UNKNOWN_OFFSET_SUM, "zero": 0, "end": end,
            "near": max(0, end - 7), "far": max(0, end - 20_000), "ahead": min(LONG_MAX, end + 5)}[choice]


def _clients(
    rng: random.Random, tasks: list[TaskInfo], racks: bool, tags: tuple[str, ...]
) -> list[KafkaStreamsState]:
    count = rng.randint(1, 10)
    big = rng.random() < 0.5
    numbers = sorted({rng.randrange(1, 2**64) for _ in range(count)}) if big else rng.sample(range(1, 65), count)
    fresh = rng.random() < 0.15  # a new application: nobody owned anything
    clients = []
    for n in numbers:
        pid = ProcessId.of_ints(n >> 1 if big else 0, n)
        offsets: dict[TaskId, int] = {}
        active: set[TaskId] = set()
        if not fresh and rng.random() < 0.85:  # else: a client that just joined
            for info in tasks:
                roll = rng.random()
                if info.has_changelog and roll < 0.35:
                    offsets[info.id] = _offset(rng, info.changelog_end_offset_sum)
                    if offsets[info.id] == LATEST_OFFSET:
                        active.add(info.id)
                elif not info.has_changelog and roll < 0.2:
                    active.add(info.id)
        client_tags = {key: rng.choice(ZONES if key == "zone" else ("c1", "c2")) for key in tags}
        clients.append(KafkaStreamsState(
            pid, tuple(f"{pid}-StreamThread-{i}" for i in range(1, rng.randint(1, 3) + 1)),
            previous_active_tasks=SortedFrozenSet(active),
            previous_standby_tasks=SortedFrozenSet(t for t in offsets if t not in active),
            task_offset_sums=offsets, client_tags=client_tags, rack_id=rng.choice(RACKS) if racks else None,
            host_info=None))
    return clients
