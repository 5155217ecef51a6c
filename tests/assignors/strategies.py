"""Hypothesis strategies: random Kafka Streams applications at one rebalance."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from taskassign.configs import UNBOUNDED_RECOVERY_LAG, AssignmentConfigs
from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState, KafkaStreamsState, TaskInfo, TaskTopicPartition

ZONES = ("az1", "az2", "az3")
LONG_MAX = 2**63 - 1


@st.composite
def tasks(draw: st.DrawFn) -> list[TaskInfo]:
    out = []
    for sub in range(draw(st.integers(1, 4))):
        stateful = draw(st.booleans()) or sub == 0
        for part in range(draw(st.integers(1, 8))):
            parts = [TaskTopicPartition(f"source-{sub}", part, True, False)]
            stores: tuple[str, ...] = ()
            end = 0
            if stateful:
                stores = (f"store-{sub}",)
                parts.append(TaskTopicPartition(f"store-{sub}-changelog", part, False, True))
                end = draw(st.sampled_from([0, 50, 5_000, 100_000, 10**12, LONG_MAX]))
            out.append(TaskInfo(TaskId(sub, part), stores, tuple(parts), end))
    return out


def _offset(draw: st.DrawFn, end: int) -> int:
    """-2 (running), -3 (unknown), 0, the end (caught up), just behind, far behind, or ahead of the end."""
    choice = draw(st.sampled_from(["running", "unknown", "zero", "end", "near", "far", "ahead"]))
    return {"running": -2, "unknown": -3, "zero": 0, "end": end, "near": max(0, end - 7),
            "far": max(0, end - 20_000), "ahead": min(LONG_MAX, end + 5)}[choice]


@st.composite
def applications(draw: st.DrawFn, max_clients: int = 8) -> ApplicationState:
    """Tasks over 1-4 subtopologies, 1..max_clients clients (1-3 threads, small or random UUIDs, zone
    and cluster tags), random previous states and lags, standbys 0-3, warm-ups, recovery lags."""
    infos = draw(tasks())
    big_ids = draw(st.booleans())
    count = draw(st.integers(1, max_clients))
    raw = draw(st.lists(st.integers(1, 2**64 - 1) if big_ids else st.integers(1, 64),
                        min_size=count, max_size=count, unique=True))
    clients = []
    for n in raw:
        pid = ProcessId.of_ints(n >> 1 if big_ids else 0, n)
        offsets = {}
        for info in infos:
            if info.has_changelog and draw(st.integers(0, 2)) == 0:
                offsets[info.id] = _offset(draw, info.changelog_end_offset_sum)
        tags = {"zone": draw(st.sampled_from(ZONES)), "cluster": draw(st.sampled_from(("c1", "c2")))}
        if draw(st.booleans()):
            tags["env"] = "prod"  # a tag that is never configured
        clients.append(KafkaStreamsState(
            pid, tuple(f"{pid}-StreamThread-{i}" for i in range(1, draw(st.integers(1, 3)) + 1)),
            previous_active_tasks=frozenset(t for t, o in offsets.items() if o == -2),
            previous_standby_tasks=frozenset(t for t, o in offsets.items() if o != -2),
            task_offset_sums=offsets, client_tags=tags))
    configs: dict[str, Any] = {
        "num_standby_replicas": draw(st.integers(0, 3)),
        "max_warmup_replicas": draw(st.integers(1, 3)),
        "acceptable_recovery_lag": draw(st.sampled_from([0, 10, 10_000, UNBOUNDED_RECOVERY_LAG])),
        "rack_aware_assignment_tags": draw(st.sampled_from([(), ("zone",), ("zone", "cluster")])),
    }
    return ApplicationState(tasks=infos, clients=clients, configs=AssignmentConfigs(**configs))
