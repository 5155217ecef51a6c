"""What moved between the previous assignment and a new one, and the sentences ``--explain`` prints.

"Previous" is what the leader knew: each client's ``previous_active_tasks`` and
``previous_standby_tasks``. An active moved when it runs on a client that did not run it before while
some client did; a standby moved when a client that held it lost it and another gained it. Assignors
that explain themselves put one sentence per moved task in ``TaskAssignment.details["explanations"]``;
for the others these sentences list the moves and say that the assignor gave no reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState, GroupAssignment, TaskAssignment

__all__ = ("Move", "explanations", "moved_tasks")

EXPLANATIONS = "explanations"


@dataclass(frozen=True, slots=True)
class Move:
    """``task`` left ``source`` for ``destination`` in the given role."""

    task: TaskId
    role: Literal["active", "standby"]
    source: ProcessId
    destination: ProcessId

    def sentence(self) -> str:
        return (f"Task {self.task} ({self.role}) moved from {self.source} to {self.destination}; "
                "the assignor gave no reason.")


def moved_tasks(state: ApplicationState, assignment: GroupAssignment | TaskAssignment) -> list[Move]:
    """Every active and standby move of ``assignment`` against the previous assignment, in TaskId order
    (actives of a task before its standbys; a task's several sources and destinations in ProcessId order)."""
    clients = assignment.clients if isinstance(assignment, GroupAssignment) else assignment.by_process()
    before_active: dict[TaskId, list[ProcessId]] = {}
    before_standby: dict[TaskId, list[ProcessId]] = {}
    for pid, client in state.clients.items():
        for t in client.previous_active_tasks:
            before_active.setdefault(t, []).append(pid)
        for t in client.previous_standby_tasks:
            before_standby.setdefault(t, []).append(pid)
    after_active: dict[TaskId, list[ProcessId]] = {}
    after_standby: dict[TaskId, list[ProcessId]] = {}
    for pid in sorted(clients):
        entry = clients[pid]
        for t in entry.active_tasks():
            after_active.setdefault(t, []).append(pid)
        for t in entry.standby_tasks():
            after_standby.setdefault(t, []).append(pid)
    moves: list[Move] = []
    for t in sorted(set(after_active) | set(after_standby)):
        ran, runs = before_active.get(t, []), after_active.get(t, [])
        for source, dest in zip([p for p in ran if p not in runs], [p for p in runs if p not in ran], strict=False):
            moves.append(Move(t, "active", source, dest))
        held, holds = before_standby.get(t, []), after_standby.get(t, [])
        lost = [p for p in held if p not in holds and p not in runs]
        gained = [p for p in holds if p not in held and p not in ran]
        for source, dest in zip(lost, gained, strict=False):
            moves.append(Move(t, "standby", source, dest))
    return moves


def explanations(state: ApplicationState, assignment: TaskAssignment, group: GroupAssignment) -> list[str]:
    """The assignor's own sentences when it gave any, else one listing sentence per move."""
    given = assignment.details.get(EXPLANATIONS)
    if given is not None:
        return [str(s) for s in given]
    return [m.sentence() for m in moved_tasks(state, group)]
