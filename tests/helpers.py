"""Shared test constants and factories (the role of Kafka's AssignmentTestUtils)."""

from __future__ import annotations

import contextlib
import copy
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from taskassign.configs import AssignmentConfigs
from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState, KafkaStreamsState, TaskInfo, TaskTopicPartition

GOLDEN_DIR = Path(__file__).parent / "golden"
EXAMPLES_DIR = Path(__file__).parent.parent / "examples"

PID = {n: ProcessId.of_ints(0, n) for n in range(1, 21)}
PID_1, PID_2, PID_3, PID_4, PID_5, PID_6 = (PID[n] for n in range(1, 7))


def tid(text: str) -> TaskId:
    return TaskId.parse(text)


TASK_0_0, TASK_0_1, TASK_0_2, TASK_0_3 = (tid(f"0_{p}") for p in range(4))
TASK_1_0, TASK_1_1, TASK_1_2 = (tid(f"1_{p}") for p in range(3))


def task(
    text: str,
    *,
    stateful: bool = True,
    end: int = 0,
    source_racks: Iterable[str] | None = None,
    changelog_racks: Iterable[str] | None = None,
    state_bytes: int | None = None,
) -> TaskInfo:
    """A task with one source partition and, when stateful, one store and one changelog partition."""
    t = tid(text)
    parts = [TaskTopicPartition(f"source-{t.subtopology}", t.partition, True, False,
                                None if source_racks is None else frozenset(source_racks))]
    stores: tuple[str, ...] = ()
    if stateful:
        stores = (f"store-{t.subtopology}",)
        parts.append(TaskTopicPartition(f"app-store-{t.subtopology}-changelog", t.partition, False, True,
                                         None if changelog_racks is None else frozenset(changelog_racks)))
    return TaskInfo(t, stores, tuple(parts), end if stateful else 0, state_bytes)


def client(
    pid: ProcessId,
    *,
    threads: int = 1,
    prev_active: Iterable[str] = (),
    prev_standby: Iterable[str] = (),
    offsets: Mapping[str, int] | None = None,
    rack: str | None = None,
    tags: Mapping[str, str] | None = None,
) -> KafkaStreamsState:
    return KafkaStreamsState(
        process_id=pid,
        consumer_client_ids=tuple(f"{pid}-StreamThread-{i}" for i in range(1, threads + 1)),
        previous_active_tasks=frozenset(tid(t) for t in prev_active),
        previous_standby_tasks=frozenset(tid(t) for t in prev_standby),
        task_offset_sums={tid(t): v for t, v in (offsets or {}).items()},
        client_tags=dict(tags or {}),
        rack_id=rack,
    )


def app_state(
    tasks: Iterable[TaskInfo], clients: Iterable[KafkaStreamsState], now_ms: int = 0, **configs: Any
) -> ApplicationState:
    return ApplicationState(
        tasks=list(tasks),  # an iterable is accepted and re-keyed (duplicates detected)
        clients=list(clients),
        configs=AssignmentConfigs(**configs),
        now_ms=now_ms,
    )


_MINIMAL_SCENARIO: dict[str, Any] = {
    "format": "taskassign/scenario/v1",
    "name": "minimal",
    "now_ms": 1000,
    "configs": {"num.standby.replicas": 1},
    "tasks": [
        {"id": "0_0", "stores": ["s"], "changelog_end_offset_sum": 100,
         "partitions": [{"topic": "in", "partition": 0, "source": True, "changelog": False},
                        {"topic": "app-s-changelog", "partition": 0, "source": False, "changelog": True}]},
        {"id": "0_1", "stores": ["s"], "changelog_end_offset_sum": 50,
         "partitions": [{"topic": "in", "partition": 1, "source": True, "changelog": False},
                        {"topic": "app-s-changelog", "partition": 1, "source": False, "changelog": True}]},
        {"id": "1_0", "stores": [], "partitions": [{"topic": "clicks", "partition": 0, "source": True}]},
    ],
    "clients": [
        {"process_id": "00000000-0000-0000-0000-000000000001", "consumers": ["c1-1", "c1-2"],
         "previous_active": ["0_0", "1_0"], "task_offset_sums": {"0_0": -2, "0_1": 40}},
        {"process_id": "00000000-0000-0000-0000-000000000002", "threads": 1,
         "previous_active": ["0_1"], "task_offset_sums": {"0_1": -2}},
    ],
}


def scenario_doc() -> dict[str, Any]:
    """A fresh, valid scenario document to mutate in tests."""
    return copy.deepcopy(_MINIMAL_SCENARIO)


def start_service(*args: str) -> tuple[subprocess.Popen[str], str]:
    """``taskassign serve --listen 127.0.0.1:0 ARGS`` in a subprocess, and the URL it says it listens on (its first
    line on stderr)."""
    process = subprocess.Popen([sys.executable, "-m", "taskassign", "serve", "--listen", "127.0.0.1:0", *args],
                               stderr=subprocess.PIPE, text=True)
    assert process.stderr is not None
    line = process.stderr.readline()
    match = re.search(r"listening on (http://[0-9.]+:[0-9]+)", line)
    if match is None:
        stop_service(process)
        raise AssertionError(f"taskassign serve did not start: {line}")
    return process, match[1]


def stop_service(process: subprocess.Popen[str]) -> None:
    """Stop a service ``start_service`` started (again is harmless)."""
    if process.poll() is None:
        process.terminate()
        process.wait(timeout=10)
    if process.stderr is not None:
        process.stderr.close()


@contextlib.contextmanager
def running_service(*args: str) -> Iterator[str]:
    """``start_service`` for the length of a ``with`` block; yields the URL."""
    process, url = start_service(*args)
    try:
        yield url
    finally:
        stop_service(process)
