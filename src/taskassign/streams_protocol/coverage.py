"""Whether a streams-group answer covers the group: every task active somewhere, and each stateful task's
standbys as many as the group can hold (``min(num.standby.replicas, processes - 1)``: one copy per process).
Kafka's assignors drop what does not fit without a word; this says what was dropped."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from taskassign.streams_protocol.model import StreamsGroup, StreamsGroupAssignment, task_name

__all__ = ("Coverage", "StandbyShortfall", "coverage")


@dataclass(frozen=True, slots=True)
class StandbyShortfall:
    task: str
    wanted: int
    placed: int


@dataclass(frozen=True, slots=True)
class Coverage:
    """Tasks without an active (``s_p`` names, task order) and stateful tasks short of standbys."""

    unassigned_tasks: tuple[str, ...]
    standby_shortfalls: tuple[StandbyShortfall, ...]

    @property
    def is_complete(self) -> bool:
        return not self.unassigned_tasks and not self.standby_shortfalls


def coverage(group: StreamsGroup, assignment: StreamsGroupAssignment, num_standby: int) -> Coverage:
    """The coverage of ``assignment``; ``num_standby`` is the standby count the assignor read."""
    actives: set[tuple[str, int]] = set()
    standbys: Counter[tuple[str, int]] = Counter()
    for member in assignment.members.values():
        actives.update((s, p) for s, partitions in member.active_tasks.items() for p in partitions)
        standbys.update((s, p) for s, partitions in member.standby_tasks.items() for p in partitions)
    processes = len({m.process_id for m in group.members})
    wanted = max(0, min(num_standby, processes - 1))
    unassigned: list[str] = []
    short: list[StandbyShortfall] = []
    for sub in group.subtopologies:
        for p in range(sub.partitions):
            if (sub.id, p) not in actives:
                unassigned.append(task_name(sub.id, p))
            if sub.stateful and standbys[(sub.id, p)] < wanted:
                short.append(StandbyShortfall(task_name(sub.id, p), wanted, standbys[(sub.id, p)]))
    return Coverage(tuple(unassigned), tuple(short))
