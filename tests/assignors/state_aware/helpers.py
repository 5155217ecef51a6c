"""Small builders for state-aware tests: tasks with state sizes, and reading results back."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from taskassign.ids import ProcessId
from taskassign.model import ApplicationState, KafkaStreamsState, TaskAssignment, TaskInfo
from tests.helpers import PID, client, task

GB = 1_000_000_000
END = 100_000


def sized(text: str, gb: float, *, end: int = END, racks: Iterable[str] | None = None) -> TaskInfo:
    """A stateful task of ``gb`` gigabytes (changelog end offset sum ``end``)."""
    r = None if racks is None else list(racks)
    return task(text, end=end, state_bytes=int(gb * GB), source_racks=r, changelog_racks=r)


def running(n: int, tasks: Iterable[str] = (), *, standby: Iterable[str] = (), threads: int = 1,
            rack: str | None = None, tags: Mapping[str, str] | None = None,
            offsets: Mapping[str, int] | None = None) -> KafkaStreamsState:
    """Client PID[n] running ``tasks`` as actives (lag -2) and caught up on ``standby`` (lag 0)."""
    active, stand = list(tasks), list(standby)
    sums = dict.fromkeys(active, -2)
    sums.update(dict.fromkeys(stand, END))
    sums.update(offsets or {})
    return client(PID[n], threads=threads, prev_active=active, prev_standby=stand, offsets=sums, rack=rack,
                  tags=tags)


def actives(result: TaskAssignment) -> dict[ProcessId, list[str]]:
    return {a.process_id: [str(t) for t in a.active_tasks()] for a in result.assignments}


def standbys(result: TaskAssignment) -> dict[ProcessId, list[str]]:
    return {a.process_id: [str(t) for t in a.standby_tasks()] for a in result.assignments}


def state_per_thread(state: ApplicationState, result: TaskAssignment) -> dict[ProcessId, float]:
    """Each client's state bytes (actives and standbys) per thread."""
    out = {}
    for a in result.assignments:
        total = sum(state.tasks[t].state_weight for t in a.tasks)
        out[a.process_id] = total / state.clients[a.process_id].num_processing_threads
    return out


def imbalance(state: ApplicationState, result: TaskAssignment) -> float:
    """Largest state per thread over the mean state per thread (1.0 = even)."""
    loads = state_per_thread(state, result)
    total = sum(loads[p] * state.clients[p].num_processing_threads for p in loads)
    threads = sum(c.num_processing_threads for c in state.clients.values())
    return max(loads.values()) / (total / threads)
