"""Scenario and events builders for simulator tests."""

from __future__ import annotations

from collections.abc import Iterable
from types import MappingProxyType
from typing import Any

from taskassign.configs import AssignmentConfigs
from taskassign.formats.events import parse_events
from taskassign.formats.scenario import Scenario
from taskassign.ids import ProcessId
from taskassign.model import ApplicationState, KafkaStreamsState
from tests.helpers import PID_1, task


def one_client_owns_everything(
    n_tasks: int = 4, *, end: int = 100_000, stateless: int = 0, threads: int = 1, rack: str | None = None,
    extra_clients: Iterable[KafkaStreamsState] = (), **configs: Any,
) -> Scenario:
    """``n_tasks`` changelog tasks 0_0.. (end offset sum ``end``) running on PID_1, plus stateless tasks 1_0..."""
    tasks = [task(f"0_{p}", end=end) for p in range(n_tasks)] + [task(f"1_{p}", stateful=False)
                                                                    for p in range(stateless)]
    owner = KafkaStreamsState(
        PID_1, tuple(f"{PID_1}-StreamThread-{i}" for i in range(1, threads + 1)),
        previous_active_tasks=frozenset(t.id for t in tasks),
        task_offset_sums={t.id: -2 for t in tasks if t.has_changelog},
        rack_id=rack,
    )
    config = AssignmentConfigs(**configs)
    state = ApplicationState(tasks=tasks, clients=[owner, *extra_clients], configs=config, now_ms=1_000_000)
    return Scenario("test", state, MappingProxyType(config.to_properties()))


def events(*items: dict[str, Any], **settings: Any) -> Any:
    return parse_events({"format": "taskassign/events/v1", **settings, "events": list(items)})


def join(pid: ProcessId, **fields: Any) -> dict[str, Any]:
    return {"type": "join", "process_id": str(pid), **fields}


def advance(ms: int) -> dict[str, Any]:
    return {"type": "advance", "ms": ms}
