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

import statistics
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from itertools import chain
from operator import attrgetter
from types import MappingProxyType
from typing import Any

from taskassign.errors import UserInputError
from taskassign.ids import ProcessId, TaskId, saturated_long
from taskassign.model import (
    LATEST_OFFSET,
    UNKNOWN_OFFSET_SUM,
    ApplicationState,
    GroupAssignment,
    KafkaStreamsAssignment,
    KafkaStreamsState,
    TaskAssignment,
    TaskTopicPartition,
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
    "compute_metrics",
    "even_spread",
    "metric_fields",
    "standby_pile_up",
    "state_weight_unit",
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


def compute_metrics(state: ApplicationState, assignment: AssignmentLike) -> AssignmentMetrics:
    """The metrics of ``assignment`` (the leader's GroupAssignment, an assignor's TaskAssignment, or a
    mapping of client assignments) for the application ``state`` it was computed from.

    Clients of ``state`` missing from the assignment count as empty. A client or task the state does
    not know raises UserInputError (the assignment belongs to another application).
    """
    placements, consumers = _normalise(assignment)
    _check_known(state, placements)
    view = _View(state, placements)
    totals = _Totals()
    weights = _state_weights(state)
    client_rows = tuple(_client_metrics(view, pid, consumers, totals, weights) for pid in state.process_ids)
    skews = _subtopology_skews(view)
    summary: dict[str, Any] = {
        **_size(view),
        **_balance(client_rows),
        **_state_load(client_rows),
        **totals.movement(view),
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


def _state_weights(state: ApplicationState) -> dict[TaskId, int]:
    """Every task's ``state_weight``, read a field at a time (10^5-10^6 tasks per application or bucket)."""
    infos = state.tasks.values()
    sizes = list(map(_STATE_BYTES, infos))
    counts = map(len, map(_STORES, infos))
    if sizes.count(None) == len(sizes):
        return dict(zip(state.tasks, counts, strict=True))
    return dict(zip(state.tasks, [n if b is None else b for b, n in zip(sizes, counts, strict=True)], strict=True))


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
    consumers = None
    if isinstance(assignment, GroupAssignment):
        by_client: Mapping[ProcessId, KafkaStreamsAssignment] = assignment.clients
        consumers = assignment.consumers
    elif isinstance(assignment, TaskAssignment):
        by_client = assignment.by_process()  # a later entry for a client wins, as on Kafka's leader
    else:
        by_client = assignment
    placements = {
        pid: _Placement(a.active_tasks().members, a.standby_tasks().members) for pid, a in by_client.items()
    }
    return placements, consumers


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
    for pid, client in state.clients.items():
        if client.num_processing_threads < 1:
            raise UserInputError(f"client {pid} has no threads, so it has no per-thread load")


class _View:
    """The assignment joined with the state: who holds what now and who held what before."""

    def __init__(self, state: ApplicationState, placements: Mapping[ProcessId, _Placement]) -> None:
        empty = _Placement(frozenset(), frozenset())
        self.state = state
        self.placements = {pid: placements.get(pid, empty) for pid in state.process_ids}
        self.active_owner: dict[TaskId, list[ProcessId]] = {}
        self.standby_holders: dict[TaskId, list[ProcessId]] = {}
        for pid, p in self.placements.items():
            for t in p.active:
                self.active_owner.setdefault(t, []).append(pid)
            for t in p.standby:
                self.standby_holders.setdefault(t, []).append(pid)
        #: Every task some client ran as active before the rebalance.
        self.previously_active: set[TaskId] = set()
        for client in state.clients.values():
            self.previously_active.update(client.previous_active_tasks.items)

    def replicas(self, task: TaskId) -> set[ProcessId]:
        """Distinct clients holding ``task`` as active or standby."""
        return set(self.active_owner.get(task, ())).union(self.standby_holders.get(task, ()))


def _restore(end: int, offset_sum: int) -> tuple[int, bool]:
    """Records a client with ``offset_sum`` restores for a changelog ending at ``end``, and whether its lag
    was unknown (Kafka's lag rules: -2 is caught up, -3 restores the whole changelog)."""
    lag = compute_lag(end, offset_sum)
    if lag == LATEST_OFFSET:
        return 0, False
    if lag == UNKNOWN_OFFSET_SUM:
        return max(0, end), True
    return lag, False


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

    def movement(self, view: _View) -> dict[str, int]:
        before = view.previously_active
        return {
            "active_moves": self.active_moves,
            "previously_unowned_tasks": len(view.active_owner.keys() - before),
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
    weights: Mapping[TaskId, int],
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
        sum(map(weights.__getitem__, {*c.active, *c.standby, *c.withheld})) if c is not None else 0
        for c in consumers)
    return active, total, state


def _client_metrics(
    view: _View, pid: ProcessId, consumers: Mapping[ProcessId, Mapping[str, Any]] | None, totals: _Totals,
    weights: Mapping[TaskId, int],
) -> ClientMetrics:
    """One client's row; its moves, restores and rack reads are added to ``totals`` on the way.

    Counts and sums come from set operations and ``map`` over the placements (integers: their order does
    not matter); the rack reads go through ``totals.read`` in the placements' own order (float sums)."""
    state = view.state
    client = state.clients[pid]
    placed = view.placements[pid]
    tasks = state.tasks
    ends = state.changelog_end_offset_sums
    offsets = client.task_offset_sums
    rack = client.rack_id
    ran = client.previous_active_tasks.members
    held = ran | client.previous_standby_tasks.members
    active, standby = placed.active, placed.standby
    active_state_load = sum(map(weights.__getitem__, active))
    state_load = active_state_load + sum(map(weights.__getitem__, standby))
    changelog_replicas = sum(map(ends.__contains__, active)) + sum(map(ends.__contains__, standby))
    moved_in = active - ran
    moves_in = len(moved_in & view.previously_active)
    records = 0
    for t in moved_in:
        end = ends.get(t)
        if end is not None:
            restored, unknown = _restore(end, offsets.get(t, 0))
            records += restored
            totals.restore_active += restored
            totals.unknown_lags += unknown
    totals.read(rack, chain.from_iterable([tasks[t].source_partitions for t in active]), True)
    new_copies = standby - held
    totals.standby_moves += len(new_copies)
    for t in new_copies:
        end = ends.get(t)
        if end is not None:
            restored, unknown = _restore(end, offsets.get(t, 0))
            records += restored
            totals.restore_standby += restored
            totals.unknown_lags += unknown
    totals.read(rack, chain.from_iterable([tasks[t].changelog_partitions for t in standby]), False)
    totals.active_moves += moves_in
    per_consumer = consumers.get(pid) if consumers is not None else None
    thread_active, thread_total, thread_state = _thread_loads(client, placed, per_consumer, state_load, weights)
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
        "active_tasks": len(view.active_owner),
        "standby_replicas": sum(map(len, view.standby_holders.values())),
        "unassigned_tasks": len(state.task_ids) - sum(map(view.active_owner.__contains__, state.task_ids)),
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
    state = view.state
    configured = state.configs.num_standby_replicas
    wanted = max(0, min(configured, len(state.clients) - 1))
    short = missing = extra = 0
    no_owner: list[ProcessId] = []
    owners_of, holders_of = view.active_owner.get, view.standby_holders.get
    for t in state.stateful_task_ids:
        holders = holders_of(t)
        if not holders:
            placed = 0
        elif len(holders) == 1:  # the usual case: no set to build
            placed = int(holders[0] not in owners_of(t, no_owner))
        else:
            owners = owners_of(t, no_owner)
            placed = sum(1 for pid in set(holders) if pid not in owners)
        if placed < wanted:
            short += 1
            missing += wanted - placed
        extra += max(0, placed - configured)
    return {"standby_shortfall_tasks": short, "missing_standby_replicas": missing, "extra_standby_replicas": extra}


def _shortfall(values: list[str], available: int) -> int:
    return min(len(values), available) - len(set(values))


def _spread(view: _View) -> dict[str, int]:
    """Rack and tag spread shortfalls. With fewer than two racks in the cluster the rack shortfall is 0 for
    every task (all replicas in the one rack, or some replica without a rack), so it is not computed."""
    state = view.state
    clients = state.clients
    all_racks = {c.rack_id for c in clients.values() if c.rack_id is not None}
    tag_keys = state.configs.rack_aware_assignment_tags
    rack_short = rack_tasks = tag_short = tag_tasks = 0
    if len(all_racks) < 2 and not tag_keys:
        return {"rack_spread_shortfall": 0, "rack_colocated_tasks": 0, "tag_spread_shortfall": 0,
                "tag_colocated_tasks": 0}
    n_racks = len(all_racks)
    rack_of = {pid: c.rack_id for pid, c in clients.items()}
    tags = []
    for key in tag_keys:
        value_of = {pid: c.client_tags[key] for pid, c in clients.items() if key in c.client_tags}
        tags.append((value_of, len(set(value_of.values()))))
    owners_of, holders_of = view.active_owner.get, view.standby_holders.get
    for t in state.stateful_task_ids:
        replicas = {*owners_of(t, ()), *holders_of(t, ())}
        if len(replicas) < 2:
            continue
        if n_racks >= 2:
            racks = [rack_of[pid] for pid in replicas]
            if None not in racks:
                gap = _shortfall(racks, n_racks)  # type: ignore[arg-type]  # no None, checked
                rack_short += gap
                rack_tasks += gap > 0
        task_gap = 0
        for value_of, available in tags:
            values = [value_of[pid] for pid in replicas if pid in value_of]
            if len(values) >= 2:
                task_gap += _shortfall(values, available)
        tag_short += task_gap
        tag_tasks += task_gap > 0
    return {
        "rack_spread_shortfall": rack_short,
        "rack_colocated_tasks": rack_tasks,
        "tag_spread_shortfall": tag_short,
        "tag_colocated_tasks": tag_tasks,
    }


def _subtopology_skews(view: _View) -> dict[str, int]:
    """Per subtopology, max - min over clients of its active tasks (clients without any count 0)."""
    counts: dict[tuple[str | None, int], dict[ProcessId, int]] = {
        sub: {} for sub in dict.fromkeys([(t[0], t[1]) for t in view.state.task_ids])}
    placed = Counter([(t[0], t[1], pid) for t, owners in view.active_owner.items() for pid in owners])
    for (name, sub, pid), n in placed.items():
        counts[(name, sub)][pid] = n
    n_clients = len(view.state.process_ids)
    skews: dict[str, int] = {}
    for (name, sub), per_client in sorted(counts.items(), key=lambda kv: (kv[0][0] or "", kv[0][1])):
        label = str(sub) if name is None else f"{name}__{sub}"
        if not n_clients:
            skews[label] = 0
            continue
        low = min(per_client.values(), default=0) if len(per_client) == n_clients else 0
        skews[label] = max(per_client.values(), default=0) - low
    return skews
