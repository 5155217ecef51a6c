"""The streams group (KIP-1071) as the broker-side assignors see it, and what they answer.

These mirror Kafka's ``GroupSpec`` / ``TopologyDescriber`` / ``GroupAssignment`` of
``org.apache.kafka.coordinator.group.api.streams.assignor``, not the classic KIP-924 contract: the unit is
a *member* (one stream thread), processes only group members; subtopology ids are strings and compared as
strings ("10" < "9"); a task is ``(subtopology id, partition)``, written ``s_p`` as Kafka's ``toString``.

Member order is part of the input: Kafka's coordinator keeps members in a ``HashMap`` filled in the order
they are listed here, and the sticky assignor's ties follow that map's iteration order.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from taskassign.internals.java_order import java_string_key

__all__ = (
    "ASSIGNOR_NAMES",
    "DEFAULT_ASSIGNOR_NAME",
    "EMPTY_TASKS",
    "GroupMember",
    "MemberAssignment",
    "StreamsGroup",
    "StreamsGroupAssignment",
    "Subtopology",
    "TaskMap",
    "task_map",
    "task_name",
)

#: Kafka's names of the broker-side assignors of the pinned revisions (docs/streams-protocol.md); ``sticky``
#: is the default.
ASSIGNOR_NAMES = ("sticky", "balanced")
DEFAULT_ASSIGNOR_NAME = "sticky"

#: Tasks by subtopology id: ``{"0": (0, 1), "1": (3,)}``; partitions ascending, no empty entries.
TaskMap = Mapping[str, tuple[int, ...]]
#: Offsets by subtopology id and partition.
OffsetMap = Mapping[str, Mapping[int, int]]

EMPTY_TASKS: TaskMap = MappingProxyType({})
_EMPTY_OFFSETS: OffsetMap = MappingProxyType({})
_EMPTY_TAGS: Mapping[str, str] = MappingProxyType({})


def task_map(tasks: Iterable[tuple[str, int]]) -> TaskMap:
    """A TaskMap of ``(subtopology id, partition)`` pairs: subtopologies in Java string order, partitions
    ascending, duplicates merged."""
    grouped: dict[str, set[int]] = {}
    for subtopology, partition in tasks:
        grouped.setdefault(subtopology, set()).add(partition)
    return MappingProxyType({s: tuple(sorted(grouped[s])) for s in sorted(grouped, key=java_string_key)})


def task_name(subtopology: str, partition: int) -> str:
    """Kafka's ``TaskId.toString`` for streams groups: ``<subtopology>_<partition>``."""
    return f"{subtopology}_{partition}"


@dataclass(frozen=True, slots=True)
class Subtopology:
    """One subtopology: ``partitions`` tasks (``maxNumInputPartitions``); only stateful ones get standbys."""

    id: str
    partitions: int
    stateful: bool


@dataclass(frozen=True, slots=True)
class GroupMember:
    """One member (a stream thread) with its tasks and what it reported. Which tasks depends on the Kafka line
    being reproduced (``lines.StickyRevision.member_tasks``): its current *target* assignment up to 4.3, the
    tasks it currently owns (reconciled) from 4.4; the task offsets are read from 4.4 only.

    Both pinned assignors read only ``process_id`` of the metadata; rack, instance id and client tags are
    kept because the group has them (and newer sticky revisions read the tags). Task maps may name tasks
    that are not in the topology (a previous assignment of an older topology); the assignors ignore them.
    """

    member_id: str
    process_id: str
    rack_id: str | None = None
    instance_id: str | None = None
    client_tags: Mapping[str, str] = field(default_factory=lambda: _EMPTY_TAGS)
    active_tasks: TaskMap = field(default_factory=lambda: EMPTY_TASKS)
    standby_tasks: TaskMap = field(default_factory=lambda: EMPTY_TASKS)
    warmup_tasks: TaskMap = field(default_factory=lambda: EMPTY_TASKS)
    #: Cumulative changelog offset sums the member reported per task with local state (KAFKA-20719).
    task_offsets: OffsetMap = field(default_factory=lambda: _EMPTY_OFFSETS)
    #: Cumulative changelog end offsets the member reported; no pinned assignor reads them.
    task_end_offsets: OffsetMap = field(default_factory=lambda: _EMPTY_OFFSETS)


@dataclass(frozen=True, slots=True)
class StreamsGroup:
    """A streams group at one target-assignment computation: topology, members, assignor and its configs.

    ``configs`` is the string map Kafka's coordinator hands the sticky assignor (``num.standby.replicas``;
    the balanced assignor reads it and ``rack.aware.assignment.tags``). ``assignor`` is Kafka's name,
    ``sticky`` (the broker's default) or ``balanced``.
    """

    name: str
    subtopologies: tuple[Subtopology, ...]
    members: tuple[GroupMember, ...]
    configs: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    assignor: str = DEFAULT_ASSIGNOR_NAME
    note: str | None = None
    #: What ``taskassign capture`` read from the broker (the file's optional ``capture`` section: epochs,
    #: current assignments, the broker's topology and configs, its release line); None for other files.
    capture: Mapping[str, Any] | None = None

    @property
    def task_count(self) -> int:
        return sum(s.partitions for s in self.subtopologies)

    @property
    def stateful_task_count(self) -> int:
        return sum(s.partitions for s in self.subtopologies if s.stateful)

    @property
    def process_ids(self) -> tuple[str, ...]:
        """Every process, in Java string order."""
        return tuple(sorted({m.process_id for m in self.members}, key=java_string_key))


@dataclass(frozen=True, slots=True)
class MemberAssignment:
    """What one member runs after the computation (Kafka's ``MemberAssignment``: no warm-ups)."""

    active_tasks: TaskMap = field(default_factory=lambda: EMPTY_TASKS)
    standby_tasks: TaskMap = field(default_factory=lambda: EMPTY_TASKS)


@dataclass(frozen=True, slots=True)
class StreamsGroupAssignment:
    """An assignor's answer: every member of the group, in member-id order (Java string order)."""

    members: Mapping[str, MemberAssignment]
