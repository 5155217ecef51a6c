"""Building ClientStates for standby assignor tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from taskassign.ids import TaskId
from taskassign.internals.client_state import ClientState
from taskassign.internals.constrained_priority_set import PoolFactory, fast_pool_factory, java_pool_factory
from tests.helpers import PID, tid

TASKS: tuple[TaskId, ...] = tuple(tid(f"{s}_{p}") for s in range(3) for p in range(4))
NUMBER = {t: n for n, t in enumerate(TASKS)}


def n(text: str) -> int:
    """The task number of ``text`` in TASKS."""
    return NUMBER[tid(text)]


def make_clients(spec: Sequence[Mapping[str, object]]) -> list[ClientState]:
    """One client per dict: ``tags``, ``threads``, ``active`` (task names), ``rack``."""
    clients = []
    for i, entry in enumerate(spec):
        client = ClientState(i, PID[i + 1], int(entry.get("threads", 1)),  # type: ignore[call-overload]
                             dict(entry.get("tags", {})), entry.get("rack"))  # type: ignore[arg-type]
        client.active.update(n(t) for t in entry.get("active", ()))  # type: ignore[attr-defined]
        clients.append(client)
    return clients


def pools(clients: Sequence[ClientState], exact: bool = False) -> PoolFactory:
    hashes = [c.process_id.java_hash() for c in clients]
    return java_pool_factory(hashes) if exact else fast_pool_factory(hashes)


def standbys(clients: Sequence[ClientState]) -> dict[int, list[str]]:
    """Client number (1-based) -> its standby task names, sorted."""
    return {c.index + 1: [str(TASKS[t]) for t in sorted(c.standby)] for c in clients}
