"""The rack-aware cost model (KIP-925; Kafka's ``RackAwareTaskAssignor``).

Placing task t on client c costs ``traffic_cost`` for every relevant partition of t without a replica on
c's rack, plus ``non_overlap_cost`` if c is not t's current holder. Which partitions are relevant depends
on the optimisation: the internal active optimiser counts source partitions, the public one every
partition of the task, standby optimisation the changelog partitions.

Because the traffic part depends only on the client's *rack*, a task is described by how many of its
partitions have a replica on each rack; that is what lets the fast solver give a task arcs to racks
instead of to every client. ``RackTable`` keeps this per task in dicts (for single lookups) and in CSR
arrays (for the vectorised graph construction of 10^5-task applications).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator, KeysView, Mapping
from dataclasses import dataclass
from itertools import compress
from operator import attrgetter
from types import MappingProxyType

import numpy as np

from taskassign.errors import RackAwareOptimizationError
from taskassign.ids import ProcessId, TaskId
from taskassign.model import ApplicationState, TaskInfo, TaskTopicPartition

__all__ = (
    "DEFAULT_NON_OVERLAP_COST",
    "DEFAULT_STICKY_NON_OVERLAP_COST",
    "DEFAULT_STICKY_TRAFFIC_COST",
    "DEFAULT_TRAFFIC_COST",
    "STATELESS_NON_OVERLAP_COST",
    "STATELESS_TRAFFIC_COST",
    "CostModel",
    "PartitionScope",
    "RackTable",
    "segments",
)

#: Kafka's costs when ``rack.aware.assignment.traffic_cost`` / ``non_overlap_cost`` are not configured:
#: the high-availability assignor (and the optimisers of ``taskassign optimize``) ...
DEFAULT_TRAFFIC_COST = 10
DEFAULT_NON_OVERLAP_COST = 1
#: ... and the sticky assignors (legacy and KIP-924), which weigh stickiness above traffic.
DEFAULT_STICKY_TRAFFIC_COST = 1
DEFAULT_STICKY_NON_OVERLAP_COST = 10
#: Fixed costs of the internal optimiser's stateless-active pass (configured costs are ignored for it).
STATELESS_TRAFFIC_COST = 1
STATELESS_NON_OVERLAP_COST = 0


class PartitionScope(enum.Enum):
    """Which partitions of a task carry traffic for an optimisation."""

    #: Kafka's internal active optimiser (HA, legacy sticky): the task's input partitions.
    SOURCE = "source"
    #: The public ``optimize_rack_aware_active_tasks``: every partition of the task.
    ALL = "all"
    #: Standby optimisation (both paths): the changelog partitions a standby restores from.
    CHANGELOG = "changelog"

    def partitions(self, info: TaskInfo) -> tuple[TaskTopicPartition, ...]:
        result: tuple[TaskTopicPartition, ...] = _PARTITIONS[self](info)
        return result


_LABELS = {PartitionScope.SOURCE: "source partition", PartitionScope.ALL: "partition",
           PartitionScope.CHANGELOG: "changelog partition"}
_PARTITIONS = {
    PartitionScope.SOURCE: attrgetter("source_partitions"),
    PartitionScope.ALL: attrgetter("topic_partitions"),
    PartitionScope.CHANGELOG: attrgetter("changelog_partitions"),
}


_RACK_IDS = attrgetter("rack_ids")


def segments(starts: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Concatenated ranges ``starts[i] .. starts[i] + lengths[i]`` (CSR rows gathered in order)."""
    total = int(lengths.sum())
    offsets = np.repeat(np.cumsum(lengths) - lengths, lengths)
    result: np.ndarray = np.arange(total, dtype=np.int64) - offsets + np.repeat(starts, lengths)
    return result


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _first_unknown(parts: tuple[TaskTopicPartition, ...]) -> TaskTopicPartition | None:
    """The first partition whose replica racks are unknown or empty."""
    for p in parts:
        if p.rack_ids is None or not p.rack_ids.items:
            return p
    return None


class _Problems(Mapping[TaskId, str]):
    """Why each task that cannot be costed strictly cannot, worded only when asked: an application's stateless
    tasks all lack changelog partitions (~500 messages per fleet application that nobody reads)."""

    __slots__ = ("_scope", "_tasks")

    def __init__(self, tasks: dict[TaskId, TaskInfo], scope: PartitionScope) -> None:
        self._tasks = tasks
        self._scope = scope

    def __getitem__(self, task: TaskId) -> str:
        parts = self._scope.partitions(self._tasks[task])
        p = _first_unknown(parts)
        if p is not None:
            return (f"TopicPartition {p.topic}-{p.partition} has no rack information. "
                    "Maybe forgot to call canEnableRackAwareAssignor first")
        return f"task {task} has no {_LABELS[self._scope]}s to compute a rack-aware cost from"

    def __contains__(self, task: object) -> bool:
        return task in self._tasks

    def __iter__(self) -> Iterator[TaskId]:
        return iter(self._tasks)

    def __len__(self) -> int:
        return len(self._tasks)

    def keys(self) -> KeysView[TaskId]:
        return self._tasks.keys()


@dataclass(frozen=True, slots=True)
class RackTable:
    """Every task's relevant partitions, per rack, for one scope; racks are interned as integers.

    ``on_rack[t][r]`` = partitions of t with a replica on rack r. CSR view: task t is row ``row[t]``;
    its racks are ``rack_ids[indptr[row]:indptr[row + 1]]`` with counts in ``counts`` alike.
    Tasks with equal counts share a signature (``signatures``, ``signature_on_rack``).
    ``unknown_racks[t]`` names t's first partition whose replica racks are unknown or empty (what makes
    rack awareness impossible); ``problems[t]`` says why t cannot be costed strictly (that, or no
    relevant partition at all).
    """

    scope: PartitionScope
    racks: tuple[str, ...]
    client_racks: Mapping[ProcessId, int | None]
    partitions: Mapping[TaskId, int]
    on_rack: Mapping[TaskId, Mapping[int, int]]
    problems: Mapping[TaskId, str]
    unknown_racks: Mapping[TaskId, str]
    row: Mapping[TaskId, int]
    indptr: np.ndarray
    rack_ids: np.ndarray
    counts: np.ndarray
    partition_counts: np.ndarray
    #: Tasks with equal per-rack counts share a signature: ``signatures[row]`` is task ``row``'s, and
    #: ``signature_on_rack[s, r]`` its partitions with a replica on rack r (a few rows per application).
    signatures: np.ndarray
    signature_on_rack: np.ndarray

    @classmethod
    def build(cls, state: ApplicationState, scope: PartitionScope) -> RackTable:
        getter = _PARTITIONS[scope]
        index: dict[str, int] = {}
        client_racks: dict[ProcessId, int | None] = {}
        for pid, client in state.clients.items():
            rack = client.rack_id
            client_racks[pid] = None if rack is None else index.setdefault(rack, len(index))
        tasks = state.tasks
        # Tasks share few distinct partition rack sets (a fleet's builder and readers share the set objects):
        # each task is keyed by its partitions' set objects (one partition: the set's id alone), and each
        # distinct key is counted once, in order of first appearance, which keeps Kafka's rack numbering
        # (a fleet application of 10^3 tasks: about half the time of a count partition by partition).
        part_lists = list(map(getter, tasks.values()))
        keys = [id(parts[0].rack_ids) if len(parts) == 1 else tuple(map(id, map(_RACK_IDS, parts)))
                for parts in part_lists]
        # Distinct set objects may still hold equal racks (inputs that do not share them): each key's partitions
        # are compared by content once, so equal ones share a signature and are counted once.
        by_content: dict[tuple[tuple[str, ...] | None, ...], int] = {}
        code_of: dict[object, int] = {}
        signatures: list[dict[int, int]] = []
        sizes: list[int] = []
        broken: list[int] = []
        unknown_codes: list[int] = []
        for key, parts in dict(zip(keys, part_lists, strict=True)).items():  # (first appearance order)
            content = tuple([None if p.rack_ids is None else p.rack_ids.items for p in parts])
            code = by_content.get(content)
            if code is None:
                code = by_content[content] = len(signatures)
                counts: dict[int, int] = {}
                for names in content:
                    for name in names or ():
                        i = index.setdefault(name, len(index))
                        counts[i] = counts.get(i, 0) + 1
                if not all(content):
                    unknown_codes.append(code)
                if not all(content) or not parts:
                    broken.append(code)
                signatures.append(counts)
                sizes.append(len(parts))
            code_of[key] = code
        codes = [code_of[key] for key in keys]
        code_array = np.asarray(codes, dtype=np.int64)
        problem_infos: dict[TaskId, TaskInfo] = {}
        unknown: dict[TaskId, str] = {}
        if broken:
            problem_infos = dict(compress(tasks.items(), np.isin(code_array, broken).tolist()))
            for tid in compress(tasks, np.isin(code_array, unknown_codes).tolist()):
                p = _first_unknown(getter(tasks[tid]))
                assert p is not None
                unknown[tid] = (f"{_LABELS[scope]} {p.topic}-{p.partition} has "
                                f"{'no rack information' if p.rack_ids is None else 'no replica with a rack'}")
        task_ids = list(tasks)
        lengths = np.fromiter(map(len, signatures), dtype=np.int64, count=len(signatures))
        sig_racks = np.fromiter((r for counts in signatures for r in counts), dtype=np.int64, count=int(lengths.sum()))
        sig_counts = np.fromiter((n for counts in signatures for n in counts.values()), dtype=np.int64,
                                 count=len(sig_racks))
        row_lengths = lengths[code_array]
        indptr = np.zeros(len(codes) + 1, dtype=np.int64)
        np.cumsum(row_lengths, out=indptr[1:])
        entries = segments((np.cumsum(lengths) - lengths)[code_array], row_lengths)
        part_counts = np.asarray(sizes, dtype=np.int64)[code_array]
        dense = np.zeros((len(signatures), len(index)), dtype=np.int64)
        dense[np.repeat(np.arange(len(signatures)), lengths), sig_racks] = sig_counts
        return cls(
            scope, tuple(index), MappingProxyType(client_racks),
            MappingProxyType(dict(zip(task_ids, map(sizes.__getitem__, codes), strict=True))),
            MappingProxyType(dict(zip(task_ids, map(signatures.__getitem__, codes), strict=True))),
            _Problems(problem_infos, scope), MappingProxyType(unknown),
            MappingProxyType(dict(zip(task_ids, range(len(task_ids)), strict=True))),
            _frozen(indptr), _frozen(sig_racks[entries]), _frozen(sig_counts[entries]), _frozen(part_counts),
            _frozen(code_array), _frozen(dense),
        )

    def missing(self, task: TaskId, rack: int) -> int:
        """Relevant partitions of ``task`` without a replica on ``rack``."""
        return self.partitions[task] - self.on_rack[task].get(rack, 0)

    def rack_of(self, client: ProcessId) -> int:
        """The client's rack index; a client without a rack cannot be costed."""
        rack = self.client_racks.get(client)
        if rack is None:
            raise RackAwareOptimizationError(
                f"client {client} has no rack (client.rack); rack-aware optimisation needs every client's "
                "rack. Maybe forgot to check that rack awareness can be enabled first"
            )
        return rack

    def require(self, tasks: Iterable[TaskId]) -> None:
        """Raise Kafka's error for the first task that cannot be costed strictly (internal optimiser)."""
        problems = self.problems
        if problems and not problems.keys().isdisjoint(tasks):  # (checked in C first: 10^3 pair problems)
            for t in tasks:
                if t in problems:
                    raise RackAwareOptimizationError(problems[t])


@dataclass(frozen=True, slots=True)
class CostModel:
    """The two cost weights over a RackTable: ``cost(t, rack, moved)``."""

    table: RackTable
    traffic_cost: int
    non_overlap_cost: int

    def traffic(self, task: TaskId, rack: int) -> int:
        """``traffic_cost`` x partitions of ``task`` without a replica on ``rack``."""
        return self.traffic_cost * self.table.missing(task, rack)

    def cost(self, task: TaskId, rack: int, moved: bool) -> int:
        return self.traffic(task, rack) + (self.non_overlap_cost if moved else 0)
