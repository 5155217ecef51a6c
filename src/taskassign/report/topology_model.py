"""What the topology diagram draws, independent of where it came from: the subtopologies with their topics and
stores, the processes (named as the operator knows them, grouped in rack or zone bands) and one or two
placements of every task (active, standby, warm-up), so the moves between two of them can be drawn.

Group files, scenarios and streams groups are turned into a ``TopologyView`` by ``topology_inputs``; the SVG
modules only read this.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ("ROLES", "Move", "Placement", "ProcessNode", "SubtopologyNode", "TaskKey", "TopologyView", "moves",
           "task_label")

#: The roles a task copy can have on a process, in drawing order.
ROLES = ("active", "standby", "warmup")
#: A task: (subtopology id as printed, partition).
TaskKey = tuple[str, int]


def task_label(task: TaskKey) -> str:
    """Kafka's ``TaskId.toString``: ``<subtopology>_<partition>``."""
    return f"{task[0]}_{task[1]}"


@dataclass(frozen=True, slots=True)
class SubtopologyNode:
    """One subtopology: what it reads and writes, its stores and their changelogs, its co-partition groups and
    its tasks' partitions. ``repartition_*`` topics connect it to other subtopologies."""

    id: str
    source_topics: tuple[str, ...] = ()
    sink_topics: tuple[str, ...] = ()
    stores: tuple[str, ...] = ()
    changelog_topics: tuple[str, ...] = ()
    copartition_groups: tuple[tuple[str, ...], ...] = ()
    partitions: tuple[int, ...] = ()
    #: Topics it reads that another subtopology writes (or that the topology declares as repartition topics).
    repartition_sources: tuple[str, ...] = ()
    #: Topics it writes that another subtopology reads.
    repartition_sinks: tuple[str, ...] = ()
    stateful: bool = False


@dataclass(frozen=True, slots=True)
class ProcessNode:
    """One Kafka Streams client (process): its id, the name shown (client id, host, endpoint, else a short
    process id), its band (rack or zone; None when unknown) and its thread count when known."""

    id: str
    label: str
    band: str | None = None
    threads: int | None = None
    #: The id cut short where it still tells the processes apart.
    short: str = ""


@dataclass(frozen=True, slots=True)
class Placement:
    """Where every task copy runs: role -> task -> the processes holding it in that role (sorted)."""

    label: str
    roles: Mapping[str, Mapping[TaskKey, tuple[str, ...]]]

    def holders(self, role: str, task: TaskKey) -> tuple[str, ...]:
        return self.roles.get(role, {}).get(task, ())

    def copies(self) -> list[tuple[TaskKey, str, str]]:
        """Every (task, role, process), in role, task, process order."""
        return [(task, role, pid) for role in ROLES for task, pids in sorted(self.roles.get(role, {}).items())
                for pid in pids]

    @classmethod
    def of(cls, label: str, copies: Mapping[str, Mapping[TaskKey, set[str] | list[str] | tuple[str, ...]]]
           ) -> Placement:
        return cls(label, MappingProxyType({
            role: MappingProxyType({task: tuple(sorted(set(pids))) for task, pids in sorted(copies[role].items())
                                    if pids})
            for role in ROLES if role in copies}))


@dataclass(frozen=True, slots=True)
class Move:
    """One task copy that lands on a process that did not hold it in that role before (``source`` is the
    process that held it before, in any role, or None for a new copy)."""

    task: TaskKey
    role: str
    target: str
    source: str | None


@dataclass(frozen=True, slots=True)
class TopologyView:
    """Everything the topology section draws. ``after`` is None when only one assignment is known; then
    ``before`` is drawn and nothing moves."""

    name: str
    kind: str
    subtopologies: tuple[SubtopologyNode, ...]
    processes: tuple[ProcessNode, ...]
    before: Placement | None
    after: Placement | None = None
    notes: tuple[str, ...] = ()
    #: What the band is: "rack" or the client tag's name ("zone").
    band_kind: str = "rack"

    @property
    def shown(self) -> Placement | None:
        """The placement drawn: the later of the two."""
        return self.after if self.after is not None else self.before

    @property
    def tasks(self) -> tuple[TaskKey, ...]:
        return tuple((s.id, p) for s in self.subtopologies for p in s.partitions)

    def moves(self) -> tuple[Move, ...]:
        """What moves from ``before`` to ``after`` (empty with a single placement)."""
        if self.before is None or self.after is None:
            return ()
        return moves(self.before, self.after)


def moves(before: Placement, after: Placement) -> tuple[Move, ...]:
    """Copies of ``after`` that ``before`` did not have on that process in that role. An active's source is the
    process that ran it before; a standby's or warm-up's is None (a new copy restores from the changelog)."""
    result = []
    for task, role, pid in after.copies():
        if pid in before.holders(role, task):
            continue
        if role == "active":
            prev = before.holders("active", task)
            result.append(Move(task, role, pid, prev[0] if prev else None))
        elif not (role == "standby" and pid in before.holders("warmup", task)) and \
                not (role == "warmup" and pid in before.holders("standby", task)):
            result.append(Move(task, role, pid, None))
    return tuple(result)
