"""EVENTS.json (``taskassign/events/v1``, docs/events.md): what happens to an application over time.

An events file is a script read top to bottom: each event happens at the script's current time, and
``advance`` moves that time forward. Reading it validates everything up front; every mistake raises
ScenarioError naming the JSON path (``$.events[3].client``). Process ids are checked against the
scenario later, when the run reaches the event (clients come and go while it runs).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from taskassign.formats.json_io import JsonObject, describe, fail, load_json_file
from taskassign.formats.scenario import _process_id  # the scenario reader's check: same messages
from taskassign.ids import ProcessId, TaskId

__all__ = (
    "EVENTS_FORMAT",
    "PROTOCOLS",
    "Advance",
    "AppendRate",
    "ClientSelector",
    "Crash",
    "Event",
    "EventsFile",
    "Join",
    "Leave",
    "Perturb",
    "RackDown",
    "RackUp",
    "Rebalance",
    "Rejoin",
    "RestoreRate",
    "RollingRestart",
    "parse_events",
    "read_events",
)

EVENTS_FORMAT = "taskassign/events/v1"
#: ``streams``: the streams rebalance protocol (KIP-1071); it goes with a streams-protocol assignor.
PROTOCOLS = ("cooperative", "eager", "streams")
DEFAULT_RESTORE_RATE = 10_000
DEFAULT_SESSION_TIMEOUT_MS = 45_000
DEFAULT_STATE_CLEANUP_DELAY_MS = 600_000
DEFAULT_SAMPLE_INTERVAL_MS = 10_000
DEFAULT_MAX_REBALANCES = 1_000
DEFAULT_MAX_DURATION_MS = 7 * 24 * 3_600_000
MAX_JOIN_COUNT = 10_000
MAX_THREADS = 100_000


@dataclass(frozen=True, slots=True)
class ClientSelector:
    """Which clients an event applies to: named ones, all eligible ones, or ``count`` drawn at random
    (from the run's seeded generator) among the eligible ones."""

    process_ids: tuple[ProcessId, ...] = ()
    all: bool = False
    count: int | None = None

    def describe(self) -> str:
        if self.all:
            return "all"
        if self.count is not None:
            return f"{self.count} at random"
        return ", ".join(str(p) for p in self.process_ids)


@dataclass(frozen=True, slots=True)
class Advance:
    """The clock moves forward ``ms``; restores progress and due rebalances happen meanwhile."""

    ms: int


@dataclass(frozen=True, slots=True)
class Join:
    """New clients join: one with ``process_id``, or ``count`` with generated ids (seeded)."""

    process_id: ProcessId | None
    count: int
    threads: int
    rack: str | None
    tags: Mapping[str, str]
    host: str | None
    restore_rate: int | None


@dataclass(frozen=True, slots=True)
class Leave:
    """Clients shut down cleanly and leave the group: a rebalance follows at once. Their local state
    stays on their disks for a later ``rejoin``."""

    clients: ClientSelector


@dataclass(frozen=True, slots=True)
class Crash:
    """Clients die: their tasks stop at once, the group notices after ``session_timeout_ms``.
    ``wipe_state`` also loses their local state (a replaced machine)."""

    clients: ClientSelector
    wipe_state: bool


@dataclass(frozen=True, slots=True)
class Rejoin:
    """Clients that left or crashed come back with the state still on their disks."""

    clients: ClientSelector


@dataclass(frozen=True, slots=True)
class RollingRestart:
    """Each selected client leaves and rejoins after ``downtime_ms``; the next one starts
    ``interval_ms`` after the previous one went down. ``order`` is ProcessId order or random."""

    clients: ClientSelector
    downtime_ms: int
    interval_ms: int
    random_order: bool


@dataclass(frozen=True, slots=True)
class RackDown:
    """Every live client in ``rack`` crashes (a rack or availability zone is lost)."""

    rack: str
    wipe_state: bool


@dataclass(frozen=True, slots=True)
class RackUp:
    """Every down client in ``rack`` rejoins."""

    rack: str


@dataclass(frozen=True, slots=True)
class RestoreRate:
    """From now on the selected clients restore ``records_per_s`` changelog records per second."""

    clients: ClientSelector
    records_per_s: int


@dataclass(frozen=True, slots=True)
class AppendRate:
    """From now on each selected changelog (None: every task with a changelog) grows by
    ``records_per_s`` records per second."""

    tasks: tuple[TaskId, ...] | None
    records_per_s: int


@dataclass(frozen=True, slots=True)
class Perturb:
    """``count`` random membership changes (seeded): a live client leaves or crashes, a down one
    rejoins, or a new one joins (with ``threads``)."""

    count: int
    threads: int


@dataclass(frozen=True, slots=True)
class Rebalance:
    """A rebalance now, with nothing else changed (an operator's ``enforceRebalance``)."""


Event = (Advance | Join | Leave | Crash | Rejoin | RollingRestart | RackDown | RackUp | RestoreRate | AppendRate
         | Perturb | Rebalance)


@dataclass(frozen=True, slots=True)
class EventsFile:
    """A decoded events file: run settings and the event script."""

    events: tuple[Event, ...]
    seed: int = 0
    #: Overrides the scenario's ``taskassign.rebalance.protocol`` (None: keep the scenario's); ``streams``: the
    #: streams protocol (which a streams-protocol assignor also selects).
    protocol: str | None = None
    restore_rate: int = DEFAULT_RESTORE_RATE
    session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS
    state_cleanup_delay_ms: int = DEFAULT_STATE_CLEANUP_DELAY_MS
    sample_interval_ms: int = DEFAULT_SAMPLE_INTERVAL_MS
    max_rebalances: int = DEFAULT_MAX_REBALANCES
    #: Stop at this offset from the start; None: when nothing is pending and nothing is left to restore.
    until_ms: int | None = None
    max_duration_ms: int = DEFAULT_MAX_DURATION_MS
    #: Where each event came from (``$.events[i]``), for error messages during the run.
    paths: tuple[str, ...] = field(default=(), compare=False)


def read_events(path: str | Path) -> EventsFile:
    """Read and validate an events file."""
    p = Path(path)
    return parse_events(load_json_file(p), source=str(p))


def parse_events(doc: Any, *, source: str | None = None) -> EventsFile:
    """Validate a decoded events document."""
    root = JsonObject(doc, "$", source)
    root.expect_format(EVENTS_FORMAT)
    seed = root.integer("seed", 0)
    protocol = root.string("protocol", None, nullable=True)
    if protocol is not None and protocol not in PROTOCOLS:
        root.fail("protocol", f"must be one of {', '.join(PROTOCOLS)}; got {protocol!r}")
    settings = {
        "restore_rate": root.integer("restore_rate", DEFAULT_RESTORE_RATE, minimum=0),
        "session_timeout_ms": root.integer("session_timeout_ms", DEFAULT_SESSION_TIMEOUT_MS, minimum=0),
        "state_cleanup_delay_ms": root.integer("state_cleanup_delay_ms", DEFAULT_STATE_CLEANUP_DELAY_MS, minimum=0),
        "sample_interval_ms": root.integer("sample_interval_ms", DEFAULT_SAMPLE_INTERVAL_MS, minimum=1),
        "max_rebalances": root.integer("max_rebalances", DEFAULT_MAX_REBALANCES, minimum=1),
        "until_ms": root.integer("until_ms", None, minimum=0, nullable=True),
        "max_duration_ms": root.integer("max_duration_ms", DEFAULT_MAX_DURATION_MS, minimum=1),
    }
    events: list[Event] = []
    paths: list[str] = []
    for i, item in enumerate(root.array("events")):
        path = f"$.events[{i}]"
        events.append(_parse_event(JsonObject(item, path, source)))
        paths.append(path)
    root.finish()
    return EventsFile(events=tuple(events), seed=seed, protocol=protocol, paths=tuple(paths), **settings)


def _parse_event(obj: JsonObject) -> Event:
    kind = obj.string("type", non_empty=True)
    parser = _PARSERS.get(kind)
    if parser is None:
        obj.fail("type", f"unknown event type {kind!r}; one of {', '.join(sorted(_PARSERS))}")
    event = parser(obj)
    obj.finish()
    return event


def _selector(obj: JsonObject, *, default_all: bool = False) -> ClientSelector:
    given = [k for k in ("client", "clients", "count") if obj.has(k)]
    if len(given) > 1:
        obj.fail(given[1], f"give one of 'client', 'clients' or 'count', not {given[0]!r} and {given[1]!r}")
    if not given:
        if default_all:
            return ClientSelector(all=True)
        obj.fail(None, "say which clients: 'client' (a process id), 'clients' (a list, or \"all\") "
                       "or 'count' (that many at random)")
    key = given[0]
    if key == "client":
        return ClientSelector((_process_id(obj.raw("client"), obj.sub("client"), obj.source),))
    if key == "count":
        return ClientSelector(count=obj.integer("count", minimum=1, maximum=MAX_JOIN_COUNT))
    value = obj.raw("clients")
    if value == "all":
        return ClientSelector(all=True)
    if not isinstance(value, list) or not value:
        obj.fail("clients", f"expected \"all\" or a non-empty list of process ids, got {describe(value)}")
    ids = tuple(_process_id(v, f"{obj.sub('clients')}[{i}]", obj.source) for i, v in enumerate(value))
    if len(set(ids)) != len(ids):
        obj.fail("clients", "a process id is listed twice")
    return ClientSelector(ids)


def _advance(obj: JsonObject) -> Advance:
    return Advance(obj.integer("ms", minimum=0))


def _join(obj: JsonObject) -> Join:
    if obj.has("process_id") and obj.has("count"):
        obj.fail("count", "give 'process_id' for one client or 'count' for generated ids, not both")
    pid = None
    if obj.has("process_id"):
        pid = _process_id(obj.raw("process_id"), obj.sub("process_id"), obj.source)
    count = obj.integer("count", 1, minimum=1, maximum=MAX_JOIN_COUNT)

    def tag(value: Any, path: str) -> str:
        if not isinstance(value, str):
            fail(path, f"expected a string tag value, got {describe(value)}", obj.source)
        return value

    return Join(
        process_id=pid,
        count=count,
        threads=obj.integer("threads", 1, minimum=1, maximum=MAX_THREADS),
        rack=obj.string("rack", None, nullable=True),
        tags=MappingProxyType(obj.map_of("tags", tag)),
        host=obj.string("host", None, nullable=True),
        restore_rate=obj.integer("restore_rate", None, minimum=0, nullable=True),
    )


def _leave(obj: JsonObject) -> Leave:
    return Leave(_selector(obj))


def _crash(obj: JsonObject) -> Crash:
    return Crash(_selector(obj), obj.boolean("wipe_state", False))


def _rejoin(obj: JsonObject) -> Rejoin:
    return Rejoin(_selector(obj))


def _rolling_restart(obj: JsonObject) -> RollingRestart:
    order = obj.string("order", "process_id")
    if order not in ("process_id", "random"):
        obj.fail("order", f"must be 'process_id' or 'random', got {order!r}")
    return RollingRestart(
        clients=_selector(obj, default_all=True),
        downtime_ms=obj.integer("downtime_ms", 30_000, minimum=0),
        interval_ms=obj.integer("interval_ms", 60_000, minimum=0),
        random_order=order == "random",
    )


def _rack_down(obj: JsonObject) -> RackDown:
    return RackDown(obj.string("rack", non_empty=True), obj.boolean("wipe_state", False))


def _rack_up(obj: JsonObject) -> RackUp:
    return RackUp(obj.string("rack", non_empty=True))


def _restore_rate(obj: JsonObject) -> RestoreRate:
    return RestoreRate(_selector(obj, default_all=True), obj.integer("records_per_s", minimum=0))


def _append_rate(obj: JsonObject) -> AppendRate:
    tasks = None
    if obj.has("tasks") and obj.raw("tasks") != "all":
        values = obj.string_list("tasks")
        if not values:
            obj.fail("tasks", "expected \"all\" or a non-empty list of task ids")
        parsed = []
        for i, text in enumerate(values):
            try:
                parsed.append(TaskId.parse(text))
            except ValueError as exc:
                fail(f"{obj.sub('tasks')}[{i}]", str(exc), obj.source)
        tasks = tuple(parsed)
    obj.raw("tasks", None)
    return AppendRate(tasks, obj.integer("records_per_s", minimum=0))


def _perturb(obj: JsonObject) -> Perturb:
    return Perturb(obj.integer("count", minimum=1, maximum=MAX_JOIN_COUNT),
                   obj.integer("threads", 1, minimum=1, maximum=MAX_THREADS))


def _rebalance(obj: JsonObject) -> Rebalance:
    return Rebalance()


_PARSERS: dict[str, Callable[[JsonObject], Event]] = {
    "advance": _advance,
    "join": _join,
    "leave": _leave,
    "crash": _crash,
    "rejoin": _rejoin,
    "rolling_restart": _rolling_restart,
    "rack_down": _rack_down,
    "rack_up": _rack_up,
    "restore_rate": _restore_rate,
    "append_rate": _append_rate,
    "perturb": _perturb,
    "rebalance": _rebalance,
}

