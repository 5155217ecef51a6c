"""How good is an assignment? Balance, movement, state load, cross-rack traffic, standby spread.

One module used by ``taskassign assign --metrics``, the simulator, the Spark pipeline and the tests:

    metrics = compute_metrics(application_state, group_assignment)
    metrics.to_dict()   # flat {name: int | float}, stable keys (docs/metrics.md), usable as Parquet columns

"Previous assignment" always means what the ApplicationState says the clients owned
(``previous_active_tasks`` / ``previous_standby_tasks``), i.e. what the group leader knew. Every metric
is defined precisely on its field below (the ``doc`` of each field) and in docs/metrics.md; the two
must agree (a test checks that every key is documented).

Terms used in the definitions:

* *per thread*: a client's count divided by its number of threads (Kafka's ``activeLoad`` /
  ``assignedLoad``, as in its ``analyzeTaskAssignmentBalance``);
* *changelog task*: a task with a changelog partition (Kafka's own assignors' "stateful": it has lags
  and gets standbys);
* *state weight* of a task: ``state_bytes`` when given, else its number of state stores (0 for a task
  without stores);
* a *replica* of a task is a client holding it as active or standby.
"""

from __future__ import annotations

import math
import statistics
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from itertools import accumulate, chain, repeat
from operator import add, attrgetter, is_, methodcaller
from types import MappingProxyType
from typing import Any

import numpy as np
import numpy.typing as npt

from taskassign.analysis._columns import Column, distinct, exact_column, keys_in, restored_records, run_sums
from taskassign.errors import UserInputError
from taskassign.ids import ProcessId, TaskId, saturated_long
from taskassign.model import (
    ACTIVE,
    LATEST_OFFSET,
    STANDBY,
    UNKNOWN_OFFSET_SUM,
    ApplicationState,
    GroupAssignment,
    KafkaStreamsAssignment,
    KafkaStreamsState,
    TaskAssignment,
    TaskInfo,
    TaskTopicPartition,
    active_and_standby,
    compute_lag,
)

__all__ = (
    "HIGHER",
    "LOWER",
    "NEITHER",
    "SECTION_STARTS",
    "UNKNOWN_RACK",
    "AssignmentMetrics",
    "ClientMetrics",
    "MetricField",
    "PlacementNumbers",
    "compute_metrics",
    "even_spread",
    "group_metrics",
    "metric_fields",
    "numbered_group_metrics",
    "standby_pile_up",
    "state_weight_unit",
    "subtopology_starts",
)

#: Row/column label of the rack traffic matrix when a client's or a partition's rack is unknown.
UNKNOWN_RACK = "?"

AssignmentLike = GroupAssignment | TaskAssignment | Mapping[ProcessId, KafkaStreamsAssignment]

#: Which way a metric improves (``MetricField.better``): lower values are better, higher values are better,
#: or neither (a size, or a property of the input rather than of the assignment).
LOWER, HIGHER, NEITHER = "lower", "higher", ""


def _metric(doc: str, default: Any = 0, *, better: str = LOWER) -> Any:
    """A summary field: part of ``to_dict()``, documented by ``doc``; ``better`` says which way it improves."""
    return field(default=default, metadata={"summary": True, "doc": doc, "better": better})


@dataclass(frozen=True, slots=True)
class MetricField:
    """One key of ``AssignmentMetrics.to_dict()``: its name, Python type (int or float), definition, and which
    way it improves (``"lower"``, ``"higher"``, or ``""`` when neither is better: a size or an input's property)."""

    name: str
    type: type
    doc: str
    better: str = LOWER


@dataclass(frozen=True, slots=True)
class ClientMetrics:
    """One client's share of an assignment (the per-client detail behind the summary metrics)."""

    process_id: ProcessId
    rack: str | None
    threads: int
    active: int
    standby: int
    #: Replicas (active or standby) of changelog tasks.
    changelog_replicas: int
    #: Sum of the state weights of the client's active and standby tasks.
    state_load: int
    #: Sum of the state weights of the client's active tasks.
    active_state_load: int
    #: Active tasks per thread (consumer order); the even spread when the thread assignment is unknown.
    thread_active: tuple[int, ...]
    #: Active + standby tasks per thread, likewise.
    thread_total: tuple[int, ...]
    #: Active tasks placed here that the client did not run as active before.
    active_moves_in: int
    #: Records this client must restore for the tasks newly placed on it.
    records_to_restore: int
    #: State load per thread (consumer order): the state weights of the tasks dealt to the thread (active,
    #: standby and withheld); the client's state load dealt evenly over its threads when the thread
    #: assignment is unknown.
    thread_state: tuple[int, ...] = ()

    @property
    def active_load(self) -> float:
        """Active tasks per thread (Kafka's ``activeLoad``)."""
        return self.active / self.threads

    @property
    def total_load(self) -> float:
        """Active and standby tasks per thread (Kafka's ``assignedLoad``)."""
        return (self.active + self.standby) / self.threads


@dataclass(frozen=True, slots=True)
class AssignmentMetrics:
    """The metrics of one assignment of one application (see the module docstring for the terms)."""

    # -- size -----------------------------------------------------------------------------------
    tasks: int = _metric("number of tasks of the application", better=NEITHER)
    changelog_tasks: int = _metric(
        "tasks with a changelog partition (the tasks that have lags and get standbys)", better=NEITHER)
    clients: int = _metric("number of clients (KafkaStreams instances) in the rebalance", better=NEITHER)
    threads: int = _metric("number of threads (consumers) over all clients", better=NEITHER)
    active_tasks: int = _metric("tasks assigned as active somewhere (a task counts once)", better=HIGHER)
    standby_replicas: int = _metric("standby replicas placed, over all tasks and clients", better=NEITHER)
    unassigned_tasks: int = _metric("tasks no client runs as active")
    # -- balance -------------------------------------------------------------------------------
    active_load_max: float = _metric("largest active tasks per thread of a client (Kafka's activeLoad)", 0.0)
    active_load_min: float = _metric("smallest active tasks per thread of a client", 0.0, better=HIGHER)
    active_load_skew: float = _metric("active_load_max - active_load_min (Kafka's convergence bound: <= 1)", 0.0)
    total_load_max: float = _metric("largest active+standby tasks per thread of a client (assignedLoad)", 0.0)
    total_load_min: float = _metric("smallest active+standby tasks per thread of a client", 0.0, better=HIGHER)
    total_load_skew: float = _metric("total_load_max - total_load_min", 0.0)
    changelog_load_skew: float = _metric(
        "max - min over clients of changelog-task replicas (active+standby) per thread "
        "(Kafka's stateful balance check: <= 1)", 0.0)
    thread_active_max: int = _metric(
        "most active tasks on one thread (from the thread-level assignment when the leader computed it, "
        "else each client's tasks dealt evenly over its threads)")
    thread_active_min: int = _metric("fewest active tasks on one thread (same source)", better=HIGHER)
    thread_active_skew: int = _metric("thread_active_max - thread_active_min")
    thread_total_max: int = _metric("most active+standby tasks on one thread (same source)")
    thread_total_min: int = _metric("fewest active+standby tasks on one thread (same source)", better=HIGHER)
    thread_total_skew: int = _metric("thread_total_max - thread_total_min")
    subtopology_skew_max: int = _metric(
        "max over subtopologies of (max - min over clients of the subtopology's active tasks on the client, "
        "clients without any counting 0); Kafka's per-subtopology balance check")
    # -- state-weighted load ------------------------------------------------------------------
    state_load_max: int = _metric("largest state load of a client: sum of the state weights of its active "
                                  "and standby tasks (state weight = state_bytes, else number of stores)")
    state_load_min: int = _metric("smallest state load of a client", better=HIGHER)
    state_load_skew: int = _metric("state_load_max - state_load_min")
    state_load_imbalance: float = _metric(
        "state_load_max / mean state load over clients (1.0 = perfectly even; 0.0 without state)", 0.0)
    active_state_load_max: int = _metric("largest sum of state weights of a client's active tasks")
    active_state_load_min: int = _metric("smallest sum of state weights of a client's active tasks", better=HIGHER)
    # -- movement against the previous assignment ----------------------------------------------
    active_moves: int = _metric(
        "tasks whose active runs on a client that was not among its previous active owners "
        "(tasks nobody ran before are not moves)")
    previously_unowned_tasks: int = _metric(
        "tasks assigned as active that no client ran as active before", better=NEITHER)
    standby_moves: int = _metric(
        "standby replicas on a client that held the task neither as active nor as standby before")
    records_to_restore_active: int = _metric(
        "sum, over changelog tasks whose active is on a client that did not run it as active before, of that "
        "client's lag (a lag of -2 counts 0; an unknown lag, -3, counts the changelog end offset sum, 0 when that "
        "is unknown too)")
    records_to_restore_standby: int = _metric(
        "sum, over standby replicas of changelog tasks on clients that held no copy before, of the client's lag "
        "(same rules)")
    records_to_restore: int = _metric("records_to_restore_active + records_to_restore_standby")
    unknown_lag_placements: int = _metric("placements counted above whose lag was unknown (-3)")
    # -- standbys --------------------------------------------------------------------------------
    standby_shortfall_tasks: int = _metric(
        "changelog tasks with fewer standbys (on clients other than the active's) than "
        "min(num.standby.replicas, clients - 1)")
    missing_standby_replicas: int = _metric("standby replicas missing over those tasks")
    extra_standby_replicas: int = _metric(
        "standby replicas beyond num.standby.replicas (warm-ups of the high-availability assignor)", better=NEITHER)
    # -- racks -----------------------------------------------------------------------------------
    cross_rack_active_partitions: int = _metric(
        "source partitions of active tasks none of whose replicas is in the client's rack")
    cross_rack_standby_partitions: int = _metric(
        "changelog partitions of standby tasks none of whose replicas is in the client's rack")
    cross_rack_partitions: int = _metric("cross_rack_active_partitions + cross_rack_standby_partitions")
    cross_rack_cost: int = _metric(
        "cross_rack_partitions x rack.aware.assignment.traffic_cost (x 1 when the cost is not configured): "
        "the traffic part of KIP-925's cost model")
    rack_unknown_partitions: int = _metric(
        "partitions counted for cross-rack traffic whose client has no rack or that have no rack information",
        better=NEITHER)
    rack_spread_shortfall: int = _metric(
        "sum over changelog tasks with 2+ replicas, all on clients with a rack, of "
        "min(replicas, racks in the cluster) - distinct racks among the replicas")
    rack_colocated_tasks: int = _metric("changelog tasks with a positive rack spread shortfall")
    tag_spread_shortfall: int = _metric(
        "the same shortfall for every key of rack.aware.assignment.tags (distinct tag values instead of racks; "
        "clients without the key are left out), summed over keys")
    tag_colocated_tasks: int = _metric("changelog tasks with a positive tag spread shortfall for some key")
    # -- state per thread (added last: keys are only ever appended) ---------------------------
    thread_state_imbalance: float = _metric(
        "heaviest thread's state load / mean state load per thread over all threads (1.0 = perfectly even; 0.0 "
        "without state); a thread's state load is the state weights of the tasks dealt to it (the thread-level "
        "assignment when the leader computed it, else each client's state load dealt evenly over its threads)",
        0.0)
    # -- standby pile-up (added last: keys are only ever appended) -----------------------------
    standby_pile_up: float = _metric(
        "most standbys per thread on one client / the median client's standbys per thread (taken as at least "
        "1); 0.0 without standbys. Kafka's standby movement can pile standbys on the lowest ProcessId "
        "(docs/kafka-differences.md, H8, H10)", 0.0)
    # -- details (not in to_dict) -------------------------------------------------------------
    client_metrics: tuple[ClientMetrics, ...] = ()
    #: Subtopology name ("0", or "name__0" for named topologies) -> its skew (see subtopology_skew_max).
    subtopology_skews: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))
    #: (client rack, partition rack) -> partitions read: a client reads a partition from its own rack when a
    #: replica is there, else the read is split evenly over the partition's racks (which replica serves it is
    #: unknown). Active tasks read their source partitions, standbys their changelog partitions.
    rack_traffic: Mapping[tuple[str, str], float] = field(default_factory=lambda: MappingProxyType({}))

    def to_dict(self) -> dict[str, int | float]:
        """The summary metrics as a flat mapping with stable keys (docs/metrics.md)."""
        return {f.name: getattr(self, f.name) for f in metric_fields()}


#: Section titles for tables of metrics, keyed by the first metric of each section (``metric_fields()`` order).
SECTION_STARTS = MappingProxyType({
    "tasks": "size",
    "active_load_max": "balance (per thread)",
    "state_load_max": "state-weighted load",
    "active_moves": "movement against the previous assignment",
    "standby_shortfall_tasks": "standbys",
    "cross_rack_active_partitions": "racks and tags",
    "thread_state_imbalance": "state per thread",
    "standby_pile_up": "standby pile-up",
})


def metric_fields() -> tuple[MetricField, ...]:
    """Every key of ``to_dict()`` with its type and definition, in output order."""
    return _FIELDS


_FIELDS = tuple(
    MetricField(f.name, float if isinstance(f.default, float) else int, f.metadata["doc"], f.metadata["better"])
    for f in fields(AssignmentMetrics)
    if f.metadata.get("summary")
)


def state_weight_unit(state: ApplicationState) -> str:
    """``"bytes"`` when state weights are sizes (some task gives ``state_bytes``), else ``"stores"`` (counts)."""
    return "bytes" if any(t.state_bytes is not None for t in state.tasks.values()) else "stores"


def compute_metrics(
    state: ApplicationState, assignment: AssignmentLike, *, rack_traffic: bool = True
) -> AssignmentMetrics:
    """The metrics of ``assignment`` (the leader's GroupAssignment, an assignor's TaskAssignment, or a
    mapping of client assignments) for the application ``state`` it was computed from.

    Clients of ``state`` missing from the assignment count as empty. A client or task the state does
    not know raises UserInputError (the assignment belongs to another application). ``rack_traffic=False``
    leaves the ``rack_traffic`` matrix empty and every other value as it is: its float cells are sums in
    the order of the reads, one Python step per partition read, and a caller that writes only ``to_dict()``
    and ``client_metrics`` (the fleet pipeline) does without them. Without them nothing needs a client's
    placements in order, so every client is counted at once over integer columns (``group_metrics``) instead
    of one client after the other (``_client_metrics``); tests/analysis holds the two to the same values.
    """
    if not rack_traffic:
        by_client, consumers = _by_client(assignment)
        return group_metrics(state, by_client, consumers)
    placements, consumers = _normalise(assignment)
    _check_known(state, placements)
    view = _View(state, placements)
    totals = _Totals()
    weights = _state_weights(state, 2 * len(state.tasks) + 1).tolist()
    client_rows = tuple(_client_metrics(view, pid, consumers, totals, weights) for pid in state.process_ids)
    totals.previously_unowned = _previously_unowned(view, view.previously_active)
    return _summarise(state, view, totals, client_rows)


def group_metrics(
    state: ApplicationState, clients: Mapping[ProcessId, KafkaStreamsAssignment],
    consumers: Mapping[ProcessId, Mapping[str, Any]] | None = None,
) -> AssignmentMetrics:
    """``compute_metrics(state, assignment, rack_traffic=False)`` of each client's assignment, with each consumer's
    share when the leader dealt them (a GroupAssignment's ``clients`` and ``consumers``). Raises UserInputError as
    ``compute_metrics`` does."""
    return numbered_group_metrics(state, clients, consumers)[0]


@dataclass(frozen=True, slots=True)
class PlacementNumbers:
    """The numbers ``numbered_group_metrics`` gave an assignment's tasks (a task's place in the application's TaskId
    order), for a caller that lists the placements: a number is read with a list index where a TaskId is hashed."""

    #: Per client of the assignment: its active and its standby task numbers, in TaskId order.
    clients: Mapping[ProcessId, tuple[list[int], list[int]]]
    #: Per consumer of the consumers mapping, in its order: its active, standby and withheld task numbers, each
    #: sorted; None without consumers, or when some consumer is not one of its client's threads in the state.
    consumers: list[tuple[list[int], list[int], list[int]]] | None


def numbered_group_metrics(
    state: ApplicationState, clients: Mapping[ProcessId, KafkaStreamsAssignment],
    consumers: Mapping[ProcessId, Mapping[str, Any]] | None = None,
) -> tuple[AssignmentMetrics, PlacementNumbers]:
    """``group_metrics``, and the task numbers it read the placements by (the fleet pipeline's result rows list
    them)."""
    view, totals, client_rows, numbers = _by_columns(state, clients, consumers)
    return _summarise(state, view, totals, client_rows), numbers


def _summarise(
    state: ApplicationState, view: _View, totals: _Totals, client_rows: tuple[ClientMetrics, ...],
) -> AssignmentMetrics:
    """The summary groups over the client rows and the placements' columns."""
    skews = _subtopology_skews(view)
    summary: dict[str, Any] = {
        **_size(view),
        **_balance(client_rows),
        **_state_load(client_rows),
        **totals.movement(),
        **_standbys(view),
        **totals.racks(state),
        **_spread(view),
        "subtopology_skew_max": max(skews.values(), default=0),
        "standby_pile_up": standby_pile_up(client_rows)[0],
    }
    return AssignmentMetrics(
        **summary,
        client_metrics=client_rows,
        subtopology_skews=MappingProxyType(skews),
        rack_traffic=MappingProxyType(dict(sorted(totals.traffic.items()))),
    )


def _state_weights(state: ApplicationState, terms: int) -> Column:
    """Every task's ``state_weight`` in TaskId order (``_View.index``) as a column any sum of ``terms`` of whose
    entries is exact (``exact_column``), read a field at a time (10^3-10^6 tasks per application or bucket)."""
    infos = state.tasks.values()
    sizes = list(map(_STATE_BYTES, infos))
    unsized = sizes.count(None)
    if not unsized:
        return exact_column(sizes, terms)
    # the stores' sizes by identity: tasks share a few store sets (a subtopology's tasks one, consecutive in TaskId
    # order), whose ``len`` is a Python call: measured once per run of the same set
    stores = list(map(_STORES, infos))
    ids = np.fromiter(map(id, stores), dtype=np.uint64, count=len(stores))
    starts = np.flatnonzero(np.concatenate(([True], ids[1:] != ids[:-1])))
    counts = np.repeat(np.fromiter(map(len, map(stores.__getitem__, starts.tolist())), dtype=np.int64,
                                   count=len(starts)), np.diff(starts, append=len(stores)))
    if unsized == len(sizes):
        return exact_column(counts, terms)
    mixed = np.array(sizes, dtype=object)
    missing = np.fromiter(map(is_, sizes, repeat(None)), dtype=np.bool_, count=len(sizes))
    mixed[missing] = counts[missing].tolist()
    return exact_column(mixed, terms)


_STATE_BYTES = attrgetter("state_bytes")
_STORES = attrgetter("state_store_names")


# ------------------------------------------------------------------------------------------------
# input handling


@dataclass(frozen=True, slots=True)
class _Placement:
    active: frozenset[TaskId]
    standby: frozenset[TaskId]


def _normalise(
    assignment: AssignmentLike,
) -> tuple[dict[ProcessId, _Placement], Mapping[ProcessId, Mapping[str, Any]] | None]:
    by_client, consumers = _by_client(assignment)
    return _placements(by_client), consumers


def _by_client(
    assignment: AssignmentLike,
) -> tuple[Mapping[ProcessId, KafkaStreamsAssignment], Mapping[ProcessId, Mapping[str, Any]] | None]:
    """Each client's assignment, and each consumer's share when the assignment has them."""
    if isinstance(assignment, GroupAssignment):
        return assignment.clients, assignment.consumers
    if isinstance(assignment, TaskAssignment):
        return assignment.by_process(), None  # a later entry for a client wins, as on Kafka's leader
    return assignment, None


def _placements(by_client: Mapping[ProcessId, KafkaStreamsAssignment]) -> dict[ProcessId, _Placement]:
    return {pid: _Placement(*map(frozenset, active_and_standby(a))) for pid, a in by_client.items()}


def _check_known(state: ApplicationState, placements: Mapping[ProcessId, _Placement]) -> None:
    tasks = state.tasks
    for pid in sorted(placements):
        if pid not in state.clients:
            raise UserInputError(f"the assignment names client {pid}, which is not in the application state")
        p = placements[pid]
        known = tasks.keys()
        if known >= p.active and known >= p.standby:  # (in C; the listing below only for the message)
            continue
        unknown = [t for t in p.active | p.standby if t not in tasks]
        if unknown:
            raise UserInputError(f"the assignment gives client {pid} task {min(unknown)}, which the application "
                                 "does not have")
    _check_threads(state)


def _check_threads(state: ApplicationState) -> None:
    for pid, client in state.clients.items():
        if client.num_processing_threads < 1:
            raise UserInputError(f"client {pid} has no threads, so it has no per-thread load")


class _View:
    """The assignment joined with the state: who holds what now and who held what before."""

    def __init__(self, state: ApplicationState, placements: Mapping[ProcessId, _Placement]) -> None:
        empty = _Placement(frozenset(), frozenset())
        self.state = state
        #: Each task's number in TaskId order, and per number its TaskInfo and whether it has a changelog: a
        #: client's placements are looked up once here, then read by number (a TaskId hashes on every lookup).
        self.index: dict[TaskId, int] = dict(zip(state.tasks, range(len(state.tasks)), strict=True))
        self.infos: list[TaskInfo] = list(state.tasks.values())
        self.logged: list[bool] = list(map(_HAS_CHANGELOG, self.infos))
        self.changelog: npt.NDArray[np.bool_] = np.array(self.logged, dtype=np.bool_)
        #: The end offset sums as a plain dict (a mapping proxy's methods, called by ``map``, cost twice a dict's).
        self.ends: dict[TaskId, int] = dict(state.changelog_end_offset_sums)
        self.placements = {pid: placements.get(pid, empty) for pid in state.process_ids}
        index = self.index
        #: Each client's placements by task number (in the placements' order), and every placement as numpy
        #: columns (task number, client number in ProcessId order): the summary groups count over them.
        self.active_at = {pid: list(map(index.__getitem__, p.active)) for pid, p in self.placements.items()}
        self.standby_at = {pid: list(map(index.__getitem__, p.standby)) for pid, p in self.placements.items()}
        self.active_task, self.active_client = _columns(self.active_at.values())
        self.standby_task, self.standby_client = _columns(self.standby_at.values())
        #: Active owners per task number (two for a task the assignment, failing validation, runs twice).
        self.owners: npt.NDArray[np.int64] = np.bincount(self.active_task, minlength=len(index))
        #: Every task some client ran as active before the rebalance.
        self.previously_active: set[TaskId] = set()
        for client in state.clients.values():
            self.previously_active.update(client.previous_active_tasks.items)
        #: Task numbers some client holds both as active and as standby (none from a keyed assignment).
        self.overlap = np.array([index[t] for p in self.placements.values() for t in p.active & p.standby],
                                dtype=np.int64)

    def replicas(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Every (task number, client number) holding the task as active or standby, once each."""
        tasks = np.concatenate([self.active_task, self.standby_task])
        holders = np.concatenate([self.active_client, self.standby_client])
        if not len(self.overlap):
            return tasks, holders
        clients = max(1, len(self.state.process_ids))
        keys = np.unique(tasks * clients + holders)
        return keys // clients, keys % clients


class _ColumnView(_View):
    """The placements as columns only (``_by_columns``): what the summary groups read."""

    def __init__(self, state: ApplicationState, index: dict[TaskId, int], infos: list[TaskInfo],
                 changelog: npt.NDArray[np.bool_], active: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]],
                 standby: tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]) -> None:
        self.state = state
        self.index = index
        self.infos = infos
        self.changelog = changelog
        self.active_task, self.active_client = active
        self.standby_task, self.standby_client = standby
        self.owners = np.bincount(self.active_task, minlength=len(index))
        self.overlap = np.zeros(0, dtype=np.int64)  # (each client's tasks come from one keyed assignment)


def _by_columns(
    state: ApplicationState, assigned: Mapping[ProcessId, KafkaStreamsAssignment],
    consumers: Mapping[ProcessId, Mapping[str, Any]] | None,
) -> tuple[_View, _Totals, tuple[ClientMetrics, ...], PlacementNumbers]:
    """``compute_metrics`` without the traffic matrix: every client's row at once, counted and summed over
    integer columns (analysis._columns) instead of ``_client_metrics``' sets per client; the same values
    (tests/analysis compare the two on random assignments)."""
    clients = state.clients
    pids = state.process_ids
    if not assigned.keys() <= clients.keys():
        _check_known(state, _placements(assigned))
    count, width = len(state.tasks), max(1, len(pids))
    index = dict(zip(state.tasks, range(count), strict=True))
    # every client's placements numbered in one pass over their keyed tasks (TaskId order), then parted by type
    placed = [assigned[pid].tasks if pid in assigned else _NONE_PLACED for pid in pids]
    try:
        numbers, owners = _numbered(index, placed)
    except KeyError:
        _check_known(state, _placements(assigned))  # (raises: a task the application does not have)
        raise
    _check_threads(state)
    kinds = list(map(_ASSIGNED_TYPE, chain.from_iterable(map(_VALUES, placed))))
    is_active = np.fromiter(map(is_, kinds, repeat(ACTIVE)), dtype=np.bool_, count=len(kinds))
    # (an AssignedTask is ACTIVE or STANDBY: the standbys are the rest, unless some kind is neither)
    is_standby = ~is_active if kinds.count(STANDBY) == len(kinds) - int(np.count_nonzero(is_active)) else \
        np.fromiter(map(is_, kinds, repeat(STANDBY)), dtype=np.bool_, count=len(kinds))
    active = numbers[is_active], owners[is_active]
    standby = numbers[is_standby], owners[is_standby]
    infos = list(state.tasks.values())
    changelog = np.fromiter(map(_HAS_CHANGELOG, infos), dtype=np.bool_, count=count)
    view = _ColumnView(state, index, infos, changelog, active, standby)
    (a_task, a_client), (s_task, s_client) = active, standby
    # before the rebalance: who ran what as active, who held a copy
    ran_task, ran_client = _numbered(index, [clients[pid].previous_active_tasks.items for pid in pids],
                                   known_only=True)
    kept_task, kept_client = _numbered(index, [clients[pid].previous_standby_tasks.items for pid in pids],
                                     known_only=True)
    ran = np.zeros(count, dtype=np.bool_)
    ran[ran_task] = True
    ran_keys = ran_task * width + ran_client
    moved = ~keys_in(a_task, a_client, ran_keys, width)
    moves_in = np.bincount(a_client[moved & ran[a_task]], minlength=len(pids))
    new_copies = ~keys_in(s_task, s_client, np.concatenate([ran_keys, kept_task * width + kept_client]), width)
    totals = _Totals()
    totals.active_moves = int(moves_in.sum())
    totals.standby_moves = int(np.count_nonzero(new_copies))
    totals.previously_unowned = int(np.count_nonzero((view.owners > 0) & ~ran))
    selected, selected_copies = moved & changelog[a_task], new_copies & changelog[s_task]
    restored_active, restored_standby, totals.unknown_lags = _restored(
        state, infos, (a_task[selected], a_client[selected]), (s_task[selected_copies], s_client[selected_copies]))
    totals.restore_active = int(restored_active.sum())
    totals.restore_standby = int(restored_standby.sum())
    totals.count_reads(view)
    # per client
    weights = _state_weights(state, 2 * count + 1)
    a_lengths = np.bincount(a_client, minlength=len(pids)).tolist()
    s_lengths = np.bincount(s_client, minlength=len(pids)).tolist()
    active_loads = run_sums(weights[a_task], a_lengths).tolist()
    standby_loads = run_sums(weights[s_task], s_lengths).tolist()
    replicas = (np.bincount(a_client[changelog[a_task]], minlength=len(pids))
                + np.bincount(s_client[changelog[s_task]], minlength=len(pids))).tolist()
    records = (restored_active + restored_standby).tolist()
    threads, shares = _thread_columns(state, consumers, index, weights, a_lengths, s_lengths,
                                      [a + s for a, s in zip(active_loads, standby_loads, strict=True)])
    listed = dict(zip(pids, zip(_runs(a_task.tolist(), a_lengths), _runs(s_task.tolist(), s_lengths),
                                strict=True), strict=True))
    numbered = PlacementNumbers({pid: listed[pid] for pid in assigned}, shares)
    moves = moves_in.tolist()
    rows = tuple(ClientMetrics(
        process_id=pid, rack=clients[pid].rack_id, threads=clients[pid].num_processing_threads,
        active=a_lengths[i], standby=s_lengths[i], changelog_replicas=replicas[i],
        state_load=saturated_long(active_loads[i] + standby_loads[i]),
        active_state_load=saturated_long(active_loads[i]),
        thread_active=threads[i][0], thread_total=threads[i][1], active_moves_in=moves[i],
        records_to_restore=saturated_long(records[i]), thread_state=tuple(map(saturated_long, threads[i][2])),
    ) for i, pid in enumerate(pids))
    return view, totals, rows, numbered


def _runs(values: list[int], lengths: Sequence[int]) -> list[list[int]]:
    """``values`` cut into consecutive runs of ``lengths``."""
    ends = list(accumulate(lengths))
    return list(map(values.__getitem__, map(slice, [0, *ends[:-1]], ends)))


_END = attrgetter("changelog_end_offset_sum")
_TASK_ID = attrgetter("id")
_SHARE_LISTS = attrgetter("active", "standby", "withheld")
_ASSIGNED_TYPE = attrgetter("type")
_VALUES = methodcaller("values")
_NONE_PLACED: Mapping[TaskId, Any] = MappingProxyType({})


def _numbered(index: Mapping[TaskId, int], groups: Sequence[Collection[TaskId]], *, known_only: bool = False,
              ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Groups of tasks as (task numbers, group numbers), group after group; KeyError for an unknown task, or with
    ``known_only`` the tasks the application does not have (a previous owner's) left out."""
    lengths = list(map(len, groups))
    flat = chain.from_iterable(groups)
    numbers = map(index.get, flat, repeat(-1)) if known_only else map(index.__getitem__, flat)
    tasks = np.fromiter(numbers, dtype=np.int64, count=sum(lengths))
    owners = np.repeat(np.arange(len(groups), dtype=np.int64), lengths)
    if not known_only:
        return tasks, owners
    known = tasks >= 0
    return tasks[known], owners[known]


def _restored(state: ApplicationState, infos: Sequence[TaskInfo], active: tuple[npt.NDArray[np.int64], ...],
              standby: tuple[npt.NDArray[np.int64], ...]) -> tuple[Column, Column, int]:
    """Records restored per client for the changelog tasks newly placed on clients, ``active`` and ``standby``
    (each as (task numbers, client numbers), in client order), from each client's reported offset sums: the
    active and the standby records per client, and how many of those lags were unknown. Both kinds in one pass
    over the clients, reading the end offset sums of these tasks only."""
    pids = state.process_ids
    tasks = np.concatenate([active[0], standby[0]])
    placed = len(tasks)
    if not placed:
        nothing = np.zeros(len(pids), dtype=np.int64)
        return nothing, nothing, 0
    owners = np.concatenate([active[1], standby[1]])
    order = np.argsort(owners, kind="stable")  # client after client, each client's actives first
    numbers = tasks[order].tolist()
    selected = list(map(infos.__getitem__, numbers))
    ids = list(map(_TASK_ID, selected))
    per_client = np.bincount(owners, minlength=len(pids)).tolist()
    offsets: list[int] = []
    start = 0
    for pid, n in zip(pids, per_client, strict=True):
        if n:
            offsets.extend(map(state.clients[pid].task_offset_sums.get, ids[start:start + n], repeat(0)))
            start += n
    records, unknown = restored_records(exact_column(list(map(_END, selected)), placed + 2),
                                        exact_column(offsets, placed + 2))
    is_active = order < len(active[0])
    kinds = owners[order] * 2 + ~is_active  # (client, kind): the active records, then the standby ones
    sums = run_sums(records, np.bincount(kinds, minlength=2 * len(pids)))
    return sums[0::2], sums[1::2], int(np.count_nonzero(unknown))


def _thread_columns(
    state: ApplicationState, consumers: Mapping[ProcessId, Mapping[str, Any]] | None, index: Mapping[TaskId, int],
    weights: Column, active: Sequence[int], standby: Sequence[int], state_loads: Sequence[int],
) -> tuple[list[tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]],
           list[tuple[list[int], list[int], list[int]]] | None]:
    """``_thread_loads`` of every client (ProcessId order), the consumers' state loads summed at once; and every
    consumer's task numbers, sorted (``PlacementNumbers.consumers``)."""
    clients = state.clients
    # the consumers measured (each client's threads in the state), numbered in the mapping's order
    slot_of: dict[ProcessId, dict[str, int]] = {}
    present: list[Any] = []
    complete = consumers is not None
    for pid, per_consumer in (consumers or {}).items():
        known = clients[pid].consumer_client_ids if pid in clients else ()
        slots = slot_of[pid] = {}
        for name, share in per_consumer.items():
            if name in known:
                slots[name] = len(present)
                present.append(share)
            else:
                complete = False
    per_share: list[tuple[int, int, int]] = []
    sorted_numbers: list[tuple[list[int], list[int], list[int]]] | None = None
    if present:
        groups = list(chain.from_iterable(map(_SHARE_LISTS, present)))  # (active, standby, withheld) per consumer
        tasks, group = _numbered(index, groups)
        width = max(1, len(index))
        keys = distinct(group // 3 * width + tasks)  # (each consumer's tasks once)
        loads = run_sums(weights[keys % width], np.bincount(keys // width, minlength=len(present))).tolist()
        lengths = list(map(len, groups))
        actives, copies = lengths[0::3], lengths[1::3]
        per_share = list(zip(actives, map(add, actives, copies), loads, strict=True))
        if complete:
            runs = _runs((np.sort(group * width + tasks) % width).tolist(), lengths)
            sorted_numbers = list(zip(runs[0::3], runs[1::3], runs[2::3], strict=True))
    elif complete:
        sorted_numbers = []
    rows = []
    nothing = (0, 0, 0)
    for i, pid in enumerate(state.process_ids):
        dealt = consumers.get(pid) if consumers is not None else None
        if dealt is None:
            threads = clients[pid].num_processing_threads
            rows.append((even_spread(active[i], threads), even_spread(active[i] + standby[i], threads),
                         even_spread(state_loads[i], threads)))
            continue
        slots = slot_of[pid]
        columns = list(zip(*[nothing if k is None else per_share[k]
                             for k in map(slots.get, clients[pid].consumer_client_ids)], strict=True))
        rows.append((columns[0], columns[1], columns[2]) if columns else ((), (), ()))
    return rows, sorted_numbers


def _columns(per_client: Iterable[list[int]]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Clients' task numbers as (task numbers, client numbers), client after client."""
    lists = list(per_client)
    tasks = np.fromiter(chain.from_iterable(lists), dtype=np.int64, count=sum(map(len, lists)))
    return tasks, np.repeat(np.arange(len(lists), dtype=np.int64), list(map(len, lists)))


def _restore(end: int, offset_sum: int) -> tuple[int, bool]:
    """Records a client with ``offset_sum`` restores for a changelog ending at ``end``, and whether its lag
    was unknown (Kafka's lag rules: -2 is caught up, -3 restores the whole changelog)."""
    lag = compute_lag(end, offset_sum)
    if lag == LATEST_OFFSET:
        return 0, False
    if lag == UNKNOWN_OFFSET_SUM:
        return max(0, end), True
    return lag, False


def _previously_unowned(view: _View, before: Iterable[TaskId]) -> int:
    """Tasks placed as active that no client ran as active before."""
    ran = np.zeros(len(view.index), dtype=np.bool_)
    ran[[i for i in map(view.index.get, before) if i is not None]] = True
    return int(np.count_nonzero((view.owners > 0) & ~ran))


def _restores(placed: Iterable[TaskId], ends: Mapping[TaskId, int], offsets: Mapping[TaskId, int]) -> tuple[int, int]:
    """``_restore`` summed over the changelog tasks among ``placed`` (records, unknown lags), from their lags in
    one ``map``: the lags other than -2 and -3 summed at once (integers: the order does not matter)."""
    logged = list(filter(ends.__contains__, placed))
    if not logged:
        return 0, 0
    lags = list(map(compute_lag, map(ends.__getitem__, logged), map(offsets.get, logged, repeat(0))))
    unknown = lags.count(UNKNOWN_OFFSET_SUM)
    records = sum(lags) - LATEST_OFFSET * lags.count(LATEST_OFFSET) - UNKNOWN_OFFSET_SUM * unknown
    if unknown:
        records += sum(_restore(ends[t], offsets.get(t, 0))[0]
                       for t, lag in zip(logged, lags, strict=True) if lag == UNKNOWN_OFFSET_SUM)
    return records, unknown


@dataclass(slots=True)
class _Totals:
    """Accumulators filled while walking every client's placements once."""

    active_moves: int = 0
    standby_moves: int = 0
    restore_active: int = 0
    restore_standby: int = 0
    unknown_lags: int = 0
    cross_active: int = 0
    cross_standby: int = 0
    rack_unknown: int = 0
    previously_unowned: int = 0
    traffic: dict[tuple[str, str], float] = field(default_factory=lambda: defaultdict(float))

    #: Each rack set read so far, by identity: (the set, its racks as a frozenset and in order, 1 / its size).
    #: A fleet's partitions share a few interned rack sets, so a partition costs a lookup here instead of the
    #: set's own (Python-level) ``__len__``, ``__contains__`` and ``__iter__``.
    rack_sets: dict[int, tuple[Any, frozenset[str], tuple[str, ...], float]] = field(default_factory=dict)

    def read(self, rack: str | None, partitions: Iterable[TaskTopicPartition], active: bool) -> None:
        """Count the reads of ``partitions`` by a client in ``rack`` (see ``rack_traffic``)."""
        row = UNKNOWN_RACK if rack is None else rack
        traffic = self.traffic
        known = self.rack_sets
        for p in partitions:
            racks = p.rack_ids
            seen = known.get(id(racks))
            if seen is None:
                seen = known[id(racks)] = _rack_set(racks)
            _, members, ordered, share = seen
            if not ordered:
                self.rack_unknown += 1
                traffic[(row, UNKNOWN_RACK)] += 1.0
                continue
            if rack is not None and rack in members:
                traffic[(row, rack)] += 1.0
                continue
            if rack is None:
                self.rack_unknown += 1
            elif active:
                self.cross_active += 1
            else:
                self.cross_standby += 1
            for r in ordered:
                traffic[(row, r)] += share

    def count_reads(self, view: _View) -> None:
        """``read``'s counts of every client at once, without the traffic matrix (``traffic`` stays empty): each
        rack set read is judged once per client rack (read within the rack, across, or unknown), each task's reads
        of each kind counted per client rack from its partitions' sets, and those summed over the placements
        (integers: the order of the reads does not matter)."""
        racks = [view.state.clients[pid].rack_id for pid in view.state.process_ids]
        names = list(dict.fromkeys(r for r in racks if r is not None))
        row_of_client = _codes(racks)
        row_of_client[row_of_client < 0] = len(names)  # the last row: clients without a rack
        for active, partitions_of, tasks, clients in ((True, _SOURCES, view.active_task, view.active_client),
                                                      (False, _CHANGELOGS, view.standby_task, view.standby_client)):
            if not len(tasks):
                continue
            # only the tasks placed this way are read (standbys: a few of the tasks), numbered among themselves
            held = distinct(tasks)
            infos = view.infos
            if len(held) < len(infos):
                infos = list(map(infos.__getitem__, held.tolist()))
                tasks = np.searchsorted(held, tasks)
            per_task = list(map(partitions_of, infos))
            sets = list(map(_RACK_IDS, chain.from_iterable(per_task)))
            if not sets:
                continue
            # the few interned rack sets, numbered by identity (one sort of their ids)
            ids = np.fromiter(map(id, sets), dtype=np.uint64, count=len(sets))
            order = np.argsort(ids, kind="stable")
            ordered = ids[order]
            first = np.concatenate(([True], ordered[1:] != ordered[:-1]))
            codes = np.empty(len(sets), dtype=np.int64)
            codes[order] = np.cumsum(first) - 1
            # per rack set and client rack (the last row: no rack): a read across racks, or of unknown racks
            judged = self._judged(names, [sets[i] for i in order[first].tolist()])
            rows = row_of_client[clients]
            if len(sets) == len(per_task) and () not in per_task:  # one partition per task: its set's judgment
                per_placement = judged[codes[tasks], rows]
            else:
                lengths = np.fromiter(map(len, per_task), dtype=np.int64, count=len(per_task))
                owner = np.repeat(np.arange(len(per_task), dtype=np.int64), lengths)
                width = len(judged)
                per_set = np.bincount(owner * width + codes, minlength=len(per_task) * width).reshape(-1, width)
                per_placement = (per_set @ judged.reshape(width, -1)).reshape(len(per_task), *judged.shape[1:])[
                    tasks, rows]
            cross, unknown = per_placement.sum(axis=0).tolist()
            self.rack_unknown += unknown
            if active:
                self.cross_active += cross
            else:
                self.cross_standby += cross

    def _judged(self, names: Sequence[str], listed: Sequence[Any]) -> npt.NDArray[np.int64]:
        """Per rack set of ``listed`` and client rack (``names``, then a last row for clients without one): whether
        ``read`` counts a read of a partition with replicas in that set across racks, and whether as unknown."""
        judged = np.zeros((len(listed), len(names) + 1, 2), dtype=np.int64)
        for column, racks in enumerate(listed):
            seen = self.rack_sets.get(id(racks))
            if seen is None:
                seen = self.rack_sets[id(racks)] = _rack_set(racks)
            _, members, ordered, _ = seen
            if not ordered:
                judged[column, :, 1] = 1
                continue
            judged[column, -1, 1] = 1
            for row, name in enumerate(names):
                judged[column, row, 0] = name not in members
        return judged

    def movement(self) -> dict[str, int]:
        return {
            "active_moves": self.active_moves,
            "previously_unowned_tasks": self.previously_unowned,
            "standby_moves": self.standby_moves,
            "records_to_restore_active": saturated_long(self.restore_active),
            "records_to_restore_standby": saturated_long(self.restore_standby),
            "records_to_restore": saturated_long(self.restore_active + self.restore_standby),
            "unknown_lag_placements": self.unknown_lags,
        }

    def racks(self, state: ApplicationState) -> dict[str, int]:
        cost = state.configs.rack_aware_traffic_cost
        cross = self.cross_active + self.cross_standby
        return {
            "cross_rack_active_partitions": self.cross_active,
            "cross_rack_standby_partitions": self.cross_standby,
            "cross_rack_partitions": cross,
            "cross_rack_cost": saturated_long(cross * (1 if cost is None else cost)),
            "rack_unknown_partitions": self.rack_unknown,
        }


_RACK_IDS = attrgetter("rack_ids")
_SOURCES = attrgetter("source_partitions")
_HAS_CHANGELOG = attrgetter("has_changelog")
_CHANGELOGS = attrgetter("changelog_partitions")


def _rack_set(racks: Iterable[str] | None) -> tuple[Any, frozenset[str], tuple[str, ...], float]:
    """A partition's rack set as ``_Totals.read`` reads it (kept with the set, so its identity stays its own)."""
    ordered = tuple(racks) if racks else ()
    return racks, frozenset(ordered), ordered, 1 / len(ordered) if ordered else 0.0


# ------------------------------------------------------------------------------------------------
# per client


def even_spread(count: int, threads: int) -> tuple[int, ...]:
    """``count`` dealt as evenly as possible over ``threads`` (the first ones get the remainder): what a thread
    holds when only the client's total is known."""
    base, extra = divmod(count, threads)
    return tuple(base + (1 if i < extra else 0) for i in range(threads))


def _thread_loads(
    client: KafkaStreamsState, placed: _Placement, per_consumer: Mapping[str, Any] | None, state_load: int,
    weights: Sequence[int], index: Mapping[TaskId, int],
) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """Per thread: active tasks, active + standby tasks, state load (see ClientMetrics)."""
    threads = client.num_processing_threads
    if per_consumer is None:
        return (even_spread(len(placed.active), threads),
                even_spread(len(placed.active) + len(placed.standby), threads),
                even_spread(state_load, threads))
    consumers = [per_consumer.get(c) for c in client.consumer_client_ids]
    active = tuple(len(c.active) if c is not None else 0 for c in consumers)
    total = tuple(len(c.active) + len(c.standby) if c is not None else 0 for c in consumers)
    state = tuple(
        sum(map(weights.__getitem__, set(map(index.__getitem__, chain(c.active, c.standby, c.withheld)))))
        if c is not None else 0
        for c in consumers)
    return active, total, state


def _client_metrics(
    view: _View, pid: ProcessId, consumers: Mapping[ProcessId, Mapping[str, Any]] | None, totals: _Totals,
    weights: Sequence[int],
) -> ClientMetrics:
    """One client's row; its moves, restores and rack reads are added to ``totals`` on the way.

    Counts and sums come from set operations and ``map`` over the placements (integers: their order does
    not matter); the rack reads go through ``totals.read`` in the placements' own order (float sums)."""
    state = view.state
    client = state.clients[pid]
    placed = view.placements[pid]
    infos, logged, ends = view.infos, view.logged, view.ends
    offsets = client.task_offset_sums
    rack = client.rack_id
    ran = client.previous_active_tasks.members
    held = ran | client.previous_standby_tasks.members
    active, standby = placed.active, placed.standby
    # (each task looked up once, by its number in TaskId order: a TaskId's hash is computed on every lookup)
    active_at, standby_at = view.active_at[pid], view.standby_at[pid]
    active_state_load = sum(map(weights.__getitem__, active_at))
    state_load = active_state_load + sum(map(weights.__getitem__, standby_at))
    changelog_replicas = sum(map(logged.__getitem__, active_at)) + sum(map(logged.__getitem__, standby_at))
    moved_in = active - ran
    moves_in = len(moved_in & view.previously_active)
    restored_active, unknown_active = _restores(moved_in, ends, offsets)
    totals.restore_active += restored_active
    totals.read(rack, chain.from_iterable(map(_SOURCES, map(infos.__getitem__, active_at))), True)
    new_copies = standby - held
    totals.standby_moves += len(new_copies)
    restored_standby, unknown_standby = _restores(new_copies, ends, offsets)
    totals.restore_standby += restored_standby
    totals.unknown_lags += unknown_active + unknown_standby
    records = restored_active + restored_standby
    totals.read(rack, chain.from_iterable(map(_CHANGELOGS, map(infos.__getitem__, standby_at))), False)
    totals.active_moves += moves_in
    per_consumer = consumers.get(pid) if consumers is not None else None
    thread_active, thread_total, thread_state = _thread_loads(client, placed, per_consumer, state_load, weights,
                                                                  view.index)
    return ClientMetrics(
        process_id=pid,
        rack=rack,
        threads=client.num_processing_threads,
        active=len(placed.active),
        standby=len(placed.standby),
        changelog_replicas=changelog_replicas,
        state_load=saturated_long(state_load),
        active_state_load=saturated_long(active_state_load),
        thread_active=thread_active,
        thread_total=thread_total,
        active_moves_in=moves_in,
        records_to_restore=saturated_long(records),
        thread_state=tuple(saturated_long(n) for n in thread_state),
    )


# ------------------------------------------------------------------------------------------------
# summary groups


def _size(view: _View) -> dict[str, int]:
    state = view.state
    return {
        "tasks": len(state.tasks),
        "changelog_tasks": len(state.stateful_task_ids),
        "clients": len(state.clients),
        "threads": sum(c.num_processing_threads for c in state.clients.values()),
        "active_tasks": int(np.count_nonzero(view.owners)),
        "standby_replicas": len(view.standby_task),
        "unassigned_tasks": len(state.task_ids) - int(np.count_nonzero(view.owners)),
    }


def _spread_of(values: Iterable[float]) -> tuple[float, float]:
    items = list(values)
    return (max(items), min(items)) if items else (0, 0)


def _balance(rows: tuple[ClientMetrics, ...]) -> dict[str, int | float]:
    a_max, a_min = _spread_of(r.active_load for r in rows)
    t_max, t_min = _spread_of(r.total_load for r in rows)
    c_max, c_min = _spread_of(r.changelog_replicas / r.threads for r in rows)
    ta_max, ta_min = _spread_of(n for r in rows for n in r.thread_active)
    tt_max, tt_min = _spread_of(n for r in rows for n in r.thread_total)
    return {
        "active_load_max": float(a_max), "active_load_min": float(a_min), "active_load_skew": float(a_max - a_min),
        "total_load_max": float(t_max), "total_load_min": float(t_min), "total_load_skew": float(t_max - t_min),
        "changelog_load_skew": float(c_max - c_min),
        "thread_active_max": int(ta_max), "thread_active_min": int(ta_min), "thread_active_skew": int(ta_max - ta_min),
        "thread_total_max": int(tt_max), "thread_total_min": int(tt_min), "thread_total_skew": int(tt_max - tt_min),
    }


def _state_load(rows: tuple[ClientMetrics, ...]) -> dict[str, int | float]:
    s_max, s_min = _spread_of(r.state_load for r in rows)
    a_max, a_min = _spread_of(r.active_state_load for r in rows)
    total = sum(r.state_load for r in rows)
    imbalance = s_max / (total / len(rows)) if rows and total else 0.0
    per_thread = [n for r in rows for n in r.thread_state]
    thread_total = sum(per_thread)
    thread_imbalance = max(per_thread) / (thread_total / len(per_thread)) if thread_total else 0.0
    return {
        "state_load_max": int(s_max), "state_load_min": int(s_min), "state_load_skew": int(s_max - s_min),
        "state_load_imbalance": float(imbalance), "thread_state_imbalance": float(thread_imbalance),
        "active_state_load_max": int(a_max), "active_state_load_min": int(a_min),
    }


def standby_pile_up(rows: Sequence[ClientMetrics]) -> tuple[float, ClientMetrics | None, float]:
    """(the ``standby_pile_up`` metric, the client holding the most standbys per thread, the median client's
    standbys per thread); (0.0, None, 0.0) without standbys."""
    per_thread = [r.standby / r.threads if r.threads else float(r.standby) for r in rows]
    if not rows or not any(per_thread):
        return 0.0, None, 0.0
    top = max(range(len(rows)), key=per_thread.__getitem__)
    median = statistics.median(per_thread)
    return per_thread[top] / max(median, 1.0), rows[top], median


def _standbys(view: _View) -> dict[str, int]:
    """Per changelog task, its standbys on clients other than its active's, counted over the placements."""
    state = view.state
    configured = state.configs.num_standby_replicas
    wanted = max(0, min(configured, len(state.clients) - 1))
    placed = np.bincount(view.standby_task, minlength=len(view.index))
    np.subtract.at(placed, view.overlap, 1)  # (a client holding a task both ways: none, from a keyed assignment)
    placed = placed[view.changelog]
    below = placed < wanted
    return {"standby_shortfall_tasks": int(np.count_nonzero(below)),
            "missing_standby_replicas": int((wanted - placed[below]).sum()),
            "extra_standby_replicas": int(np.maximum(placed - configured, 0).sum())}


def _spread(view: _View) -> dict[str, int]:
    """Rack and tag spread shortfalls. With fewer than two racks in the cluster the rack shortfall is 0 for
    every task (all replicas in the one rack, or some replica without a rack), so it is not computed.
    Counted over every (task, client) replica at once: per task its replicas, its distinct racks or tag values."""
    state = view.state
    clients = state.clients
    all_racks = {c.rack_id for c in clients.values() if c.rack_id is not None}
    tag_keys = state.configs.rack_aware_assignment_tags
    if len(all_racks) < 2 and not tag_keys:
        return {"rack_spread_shortfall": 0, "rack_colocated_tasks": 0, "tag_spread_shortfall": 0,
                "tag_colocated_tasks": 0}
    tasks, holders = view.replicas()
    count = len(view.index)
    replicas = np.bincount(tasks, minlength=count)
    measured = view.changelog & (replicas >= 2)  # changelog tasks with 2+ replicas
    rack_short = rack_tasks = 0
    if len(all_racks) >= 2:
        racks = _codes([clients[pid].rack_id for pid in state.process_ids])[holders]
        gap = _shortfalls(tasks, racks, replicas, len(all_racks), count)
        rackless = np.bincount(tasks[racks < 0], minlength=count)  # replicas on clients without a rack
        gap = gap[measured & (rackless == 0)]
        rack_short, rack_tasks = int(gap.sum()), int(np.count_nonzero(gap > 0))
    task_gap = np.zeros(count, dtype=np.int64)
    for key in tag_keys:
        values = _codes([clients[pid].client_tags.get(key) for pid in state.process_ids])
        available = len({c.client_tags[key] for c in clients.values() if key in c.client_tags})
        held = values[holders]
        with_key = np.bincount(tasks[held >= 0], minlength=count)
        task_gap += np.where(with_key >= 2, _shortfalls(tasks, held, with_key, available, count), 0)
    task_gap = task_gap[measured]
    return {
        "rack_spread_shortfall": rack_short,
        "rack_colocated_tasks": rack_tasks,
        "tag_spread_shortfall": int(task_gap.sum()),
        "tag_colocated_tasks": int(np.count_nonzero(task_gap > 0)),
    }


def _codes(values: Sequence[str | None]) -> npt.NDArray[np.int64]:
    """Each value's number among the distinct values (-1 for None)."""
    numbers = {v: i for i, v in enumerate(dict.fromkeys(v for v in values if v is not None))}
    return np.array([-1 if v is None else numbers[v] for v in values], dtype=np.int64)


def _shortfalls(tasks: npt.NDArray[np.int64], values: npt.NDArray[np.int64], present: npt.NDArray[np.int64],
                available: int, count: int) -> npt.NDArray[np.int64]:
    """Per task, min(its replicas with a value, ``available``) - its distinct values (the replicas without a
    value, -1, left out): ``_shortfall`` of every task at once."""
    known = values >= 0
    width = int(values.max(initial=0)) + 1
    pairs = np.bincount(tasks[known] * width + values[known], minlength=count * width).reshape(count, width)
    distinct: npt.NDArray[np.int64] = np.count_nonzero(pairs, axis=1)
    return np.minimum(present, available) - distinct


def subtopology_starts(ids: Sequence[TaskId]) -> list[int]:
    """Where each subtopology's tasks start among ``ids`` (sorted TaskIds: a TaskId is the tuple (topology name,
    subtopology, partition), and every task is named or none is, as None and a name do not sort)."""
    firsts: list[int] = []
    start = 0
    while start < len(ids):
        firsts.append(start)
        name, sub, _ = ids[start]
        start = bisect_right(ids, (name, sub, math.inf), lo=start)
    return firsts




def _subtopology_skews(view: _View) -> dict[str, int]:
    """Per subtopology, max - min over clients of its active tasks (clients without any count 0). The tasks are
    in TaskId order, so a subtopology's tasks are consecutive: each one's first found by bisection (a few
    subtopologies, 10^3 tasks), each placement's subtopology by its task number."""
    ids = view.state.task_ids.items
    firsts = subtopology_starts(ids)
    n_clients = len(view.state.process_ids)
    spread = [0] * len(firsts)
    if n_clients and firsts:
        of_task = np.searchsorted(np.array(firsts, dtype=np.int64), view.active_task, side="right") - 1
        counts = np.bincount(of_task * n_clients + view.active_client,
                             minlength=len(firsts) * n_clients).reshape(len(firsts), n_clients)
        spread = (counts.max(axis=1) - counts.min(axis=1)).tolist()
    keys = [(ids[i][0], ids[i][1]) for i in firsts]
    return {str(sub) if name is None else f"{name}__{sub}": spread[i]
            for i, (name, sub) in sorted(enumerate(keys), key=lambda kv: (kv[1][0] or "", kv[1][1]))}
