"""One application of a fleet through the engine: build its Scenario, assign, measure, report.

``assign_application`` is what the pipeline runs for every application inside Spark's Arrow workers
(and what tests run without Spark). The engine call is ``leader.assign.assign_scenario``, the code path of
``taskassign assign`` (with ``streams_sticky`` / ``streams_balanced``: the broker's target assignment under the
streams protocol, each thread a member; an assignor that throws there keeps the previous assignment too).
Nothing escapes as an exception: an application whose state is invalid comes back REJECTED with the
reason; one whose assignor raises keeps its previous assignment (KEPT_PREVIOUS, the leader's
TaskAssignmentException path: identity assignment, immediate follow-up rebalance); one whose assignment
fails Kafka's validation comes back INVALID_ASSIGNMENT with what the assignor produced.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypedDict

from taskassign.analysis.metrics import (
    AssignmentMetrics,
    PlacementNumbers,
    numbered_group_metrics,
    subtopology_starts,
)
from taskassign.assignors.base import BaseTaskAssignor
from taskassign.assignors.registry import DEFAULT_ASSIGNOR, ResolvedAssignor, builtin_name, resolve
from taskassign.configs import KAFKA_COMPAT, KAFKA_VERSION, AssignmentConfigs
from taskassign.errors import (
    AssignorNotFoundError,
    ConfigError,
    PluginAssignorError,
    PluginNotAllowedError,
    TaskAssignmentException,
    UserInputError,
)
from taskassign.fleet.build import AppInput, BuiltApplication, build_scenario
from taskassign.fleet.reasons import (
    ASSIGNOR_FAILED,
    INVALID_ASSIGNMENT,
    INVALID_CONFIG,
    INVALID_STATE,
    PLUGIN_NOT_ALLOWED,
    STATUS_ASSIGNED,
    STATUS_INVALID_ASSIGNMENT,
    STATUS_KEPT_PREVIOUS,
    STATUS_REJECTED,
    UNKNOWN_ASSIGNOR,
)
from taskassign.ids import TaskId
from taskassign.leader.assign import assign_scenario
from taskassign.leader.run import RebalanceResult, rebalance
from taskassign.model import ApplicationState, AssignmentError, TaskAssignment, active_and_standby

__all__ = (
    "AppCheck",
    "AppResult",
    "ClientResult",
    "ConsumerResult",
    "assign_application",
    "check_application",
    "effective_assignor",
)


class ClientResult(TypedDict):
    process_id: str
    rack: str | None
    num_threads: int
    active_tasks: list[str]
    standby_tasks: list[str]
    followup_rebalance_deadline_ms: int | None
    #: From taskassign.analysis.metrics' per-client metrics (None when the assignment could not be measured).
    records_to_restore: int | None
    state_load: int | None
    active_moves_in: int | None


class ConsumerResult(TypedDict):
    process_id: str
    consumer_id: str
    active_tasks: list[str]
    standby_tasks: list[str]
    withheld_tasks: list[str]
    followup_rebalance_deadline_ms: int | None


class AppResult(TypedDict):
    app_id: str
    status: str
    reason_code: str | None
    reason: str | None
    assignor: str | None
    error: str | None
    probing_rebalance_needed: bool | None
    end_offsets_known: bool | None
    build_seconds: float
    engine_seconds: float
    metrics_seconds: float
    source_rows: dict[str, int] | None
    metrics: dict[str, int | float] | None
    clients: list[ClientResult]
    consumers: list[ConsumerResult]


def effective_assignor(app_assignor: str | None, override: ResolvedAssignor | str | None) -> ResolvedAssignor | str:
    """The run's ``--assignor`` wins over the application's; neither: the registry's default."""
    return override or app_assignor or DEFAULT_ASSIGNOR


@dataclass(frozen=True, slots=True)
class AppCheck:
    """An application row's configs and assignor, checked before any of its other rows are used."""

    code: str | None
    reason: str | None
    #: rack.aware.assignment.tags: every member must carry these tags.
    required_tags: tuple[str, ...] = ()
    kafka_compat: bool = False
    #: The configs, for the checks of other columns that depend on them (now_ms).
    configs: AssignmentConfigs | None = None


def check_application(
    configs: Mapping[str, str] | None, assignor: str | None, *, assignor_override: ResolvedAssignor | str | None = None,
    kafka_compat: bool = False, allow_plugins: bool = False, kafka_version: str | None = None,
) -> AppCheck:
    """INVALID_CONFIG, PLUGIN_NOT_ALLOWED or UNKNOWN_ASSIGNOR with the reason, or no code and what later
    checks need. The application's own ``assignor`` is data: a plug-in there is refused, without importing
    it, unless ``allow_plugins``; the run's ``assignor_override`` is the user's choice."""
    props = dict(configs or {})
    if kafka_compat:
        props[KAFKA_COMPAT] = "true"
    if kafka_version is not None:
        props[KAFKA_VERSION] = kafka_version
    try:
        parsed = AssignmentConfigs.from_properties(props, coerce_strings=True)
    except ConfigError as exc:
        return AppCheck(INVALID_CONFIG, str(exc))
    try:
        resolve(effective_assignor(assignor, assignor_override),
                allow_plugins=allow_plugins or assignor_override is not None, source="the snapshot")
    except PluginNotAllowedError as exc:
        return AppCheck(PLUGIN_NOT_ALLOWED, str(exc))
    except AssignorNotFoundError as exc:
        return AppCheck(UNKNOWN_ASSIGNOR, str(exc))
    return AppCheck(None, None, parsed.rack_aware_assignment_tags, parsed.kafka_compat, parsed)


class _FailedAssignor(BaseTaskAssignor):
    """Replays an assignor's failure as the TaskAssignmentException the leader knows how to handle."""

    def __init__(self, reason: str) -> None:
        self._reason = reason

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        raise TaskAssignmentException(self._reason)


def assign_application(
    app: AppInput, *, assignor_override: ResolvedAssignor | str | None = None, kafka_compat: bool = False,
    allow_plugins: bool = False, kafka_version: str | None = None,
) -> AppResult:
    """Run one application through the engine; never raises for a problem of the application itself (a
    plug-in assignor named by the application is refused, unimported, unless ``allow_plugins``)."""
    assignor = effective_assignor(app.get("assignor"), assignor_override)
    started = time.perf_counter()
    resolved: ResolvedAssignor | None = None
    unresolved: AssignorNotFoundError | None = None
    try:
        resolved = resolve(assignor, allow_plugins=allow_plugins or assignor_override is not None,
                           source="the snapshot")
    except PluginNotAllowedError as exc:
        return _rejected(_empty_result(app, _unresolved_name(assignor)), PLUGIN_NOT_ALLOWED, str(exc), started)
    except AssignorNotFoundError as exc:
        unresolved = exc  # reported where the assignor runs, after the application's own checks
    result = _empty_result(app, resolved.name if resolved is not None else _unresolved_name(assignor))
    try:
        built = build_scenario(app, kafka_compat=kafka_compat, kafka_version=kafka_version)
    except ConfigError as exc:
        return _rejected(result, INVALID_CONFIG, str(exc), started)
    except UserInputError as exc:
        return _rejected(result, INVALID_STATE, str(exc), started)
    assigned_at = time.perf_counter()
    result["build_seconds"] = assigned_at - started
    scenario = built.scenario
    try:
        if resolved is None:
            assert unresolved is not None
            raise unresolved
        outcome = assign_scenario(scenario, resolved)
    except AssignorNotFoundError as exc:
        return _rejected(result, UNKNOWN_ASSIGNOR, str(exc), started)
    except UserInputError as exc:
        return _rejected(result, INVALID_CONFIG, str(exc), started)
    except Exception as exc:
        reason = f"{exc.detail} in {exc.method}" if isinstance(exc, PluginAssignorError) else \
            f"{type(exc).__name__}: {exc}"
        outcome = rebalance(scenario.state, _FailedAssignor(reason), assignor_name=result["assignor"],
                            leader=scenario.leader_process_id, raise_on_error=False)
    measured_at = time.perf_counter()
    result["engine_seconds"] = measured_at - assigned_at
    _fill(result, built, outcome)
    result["source_rows"] = app.get("source_rows")
    result["metrics_seconds"] = time.perf_counter() - measured_at
    return result


def _unresolved_name(assignor: ResolvedAssignor | str) -> str:
    """The name a result carries for an assignor that did not resolve: the short name of a built-in, else the
    text (what a resolved assignor's ``name`` would have been)."""
    if isinstance(assignor, ResolvedAssignor):
        return assignor.name
    return builtin_name(assignor) or assignor.strip()


def _empty_result(app: AppInput, assignor: str) -> AppResult:
    return AppResult(
        app_id=app["app_id"], status=STATUS_REJECTED, reason_code=None, reason=None, assignor=assignor,
        error=None, probing_rebalance_needed=None, end_offsets_known=app.get("end_offsets_known"),
        build_seconds=0.0, engine_seconds=0.0, metrics_seconds=0.0, source_rows=None, metrics=None,
        clients=[], consumers=[],
    )


def _rejected(result: AppResult, code: str, reason: str, started: float) -> AppResult:
    result["status"] = STATUS_REJECTED
    result["reason_code"] = code
    result["reason"] = reason
    result["build_seconds"] = time.perf_counter() - started
    return result


def _fill(result: AppResult, built: BuiltApplication, outcome: RebalanceResult) -> None:
    state = built.scenario.state
    result["error"] = outcome.error.name
    result["probing_rebalance_needed"] = outcome.probing_rebalance_needed
    result["assignor"] = outcome.assignor
    if outcome.fallback_reason is not None:
        result["status"] = STATUS_KEPT_PREVIOUS
        result["reason_code"] = ASSIGNOR_FAILED
        result["reason"] = f"the assignor raised ({outcome.fallback_reason}); previous assignment kept, " \
                           "immediate follow-up rebalance"
    elif outcome.error is not AssignmentError.NONE:
        result["status"] = STATUS_INVALID_ASSIGNMENT
        result["reason_code"] = INVALID_ASSIGNMENT
        result["reason"] = f"the assignment failed Kafka's validation: {outcome.error.name}"
    else:
        result["status"] = STATUS_ASSIGNED
    measured, numbers = _measure(built, outcome)
    result["metrics"] = measured.to_dict() if measured is not None else None
    per_client = {m.process_id: m for m in measured.client_metrics} if measured is not None else {}
    # Each task's id as text once per process (a task is written up to three times: its client's and its
    # consumer's lists; a fleet's applications number their tasks alike); by the numbers the metrics gave the
    # tasks when they measured the assignment (a list index instead of a TaskId's hash).
    if len(_NAMES) > _NAMES_LIMIT:
        _NAMES.clear()
    names = _NAMES
    numbered = numbers.clients if numbers is not None else None
    by_number = _names_by_number(state.task_ids.items) if numbers is not None else []
    clients: list[ClientResult] = []
    for pid, assignment in outcome.group.clients.items():
        client = state.clients[pid]
        detail = per_client.get(pid)
        if numbered is not None:
            active, standby = numbered[pid]
            active_names, standby_names = list(map(by_number.__getitem__, active)), \
                list(map(by_number.__getitem__, standby))
        else:
            active_ids, standby_ids = active_and_standby(assignment)
            active_names, standby_names = list(map(names.__getitem__, active_ids)), \
                list(map(names.__getitem__, standby_ids))
        clients.append(ClientResult(
            process_id=str(pid), rack=client.rack_id, num_threads=client.num_processing_threads,
            active_tasks=active_names, standby_tasks=standby_names,
            followup_rebalance_deadline_ms=assignment.followup_rebalance_deadline,
            records_to_restore=detail.records_to_restore if detail else None,
            state_load=detail.state_load if detail else None,
            active_moves_in=detail.active_moves_in if detail else None,
        ))
    result["clients"] = clients
    sorted_numbers = numbers.consumers if numbers is not None else None
    result["consumers"] = _consumers(outcome, names) if sorted_numbers is None else \
        _numbered_consumers(outcome, sorted_numbers, by_number)


class _TaskNames(dict[Any, str]):
    """Task ids as text, each made on first use and kept."""

    def __missing__(self, task: Any) -> str:
        name = self[task] = str(task)
        return name


_NAMES = _TaskNames()
#: The most task ids ``_NAMES`` keeps before it starts again (a worker runs many buckets).
_NAMES_LIMIT = 1 << 21
#: (topology name, subtopology) -> the ids as text of its partitions 0, 1, ...: a fleet's applications number
#: their tasks alike, so a subtopology whose partitions are 0..n-1 takes the first n names, no task id hashed.
_RUN_NAMES: dict[tuple[str | None, int], list[str]] = {}


def _names_by_number(ids: Sequence[TaskId]) -> list[str]:
    """Every task's id as text, in TaskId order (``ids`` sorted): ``str(task)`` for each."""
    if sum(map(len, _RUN_NAMES.values())) > _NAMES_LIMIT:
        _RUN_NAMES.clear()
    starts = subtopology_starts(ids)
    names: list[str] = []
    for first, end in zip(starts, [*starts[1:], len(ids)], strict=False):  # (no ids: no starts, one end)
        name, sub, partition = ids[first]
        if partition == 0 and ids[end - 1][2] == end - first - 1:  # (sorted and distinct: partitions 0..n-1)
            known = _RUN_NAMES.get((name, sub))
            if known is None or len(known) < end - first:
                known = _RUN_NAMES[(name, sub)] = list(map(str, ids[first:end]))
            names += known[:end - first]
        else:
            names += map(_NAMES.__getitem__, ids[first:end])
    return names


def _measure(
    built: BuiltApplication, outcome: RebalanceResult,
) -> tuple[AssignmentMetrics, PlacementNumbers] | tuple[None, None]:
    """taskassign.analysis.metrics of the leader's group assignment, without the rack traffic matrix, which is not
    written, and the task numbers it read the placements by (the result rows list them); None for an assignment
    that names clients or tasks the application does not have (an invalid assignment cannot be measured)."""
    try:
        return numbered_group_metrics(built.scenario.state, outcome.group.clients, outcome.group.consumers)
    except UserInputError:
        return None, None


def _consumers(outcome: RebalanceResult, names: Mapping[Any, str]) -> list[ConsumerResult]:
    """Each consumer's share, when the leader distributed the tasks over threads (``computeNewAssignment``); task lists
    in TaskId order, as in assignment files."""
    text = names.__getitem__
    return _consumer_rows(outcome, (
        (list(map(text, sorted(share.active))), list(map(text, sorted(share.standby))),
         list(map(text, sorted(share.withheld))))
        for consumers in (outcome.group.consumers or {}).values() for share in consumers.values()))


def _numbered_consumers(outcome: RebalanceResult, numbers: list[tuple[list[int], list[int], list[int]]],
                        by_number: list[str]) -> list[ConsumerResult]:
    """``_consumers`` from the consumers' task numbers, already sorted (``PlacementNumbers.consumers``, the same
    consumers in the same order), and each task's id as text by number."""
    text = by_number.__getitem__
    return _consumer_rows(outcome, ((list(map(text, active)), list(map(text, standby)), list(map(text, withheld)))
                                    for active, standby, withheld in numbers))


def _consumer_rows(outcome: RebalanceResult, lists: Iterator[tuple[list[str], list[str], list[str]]],
                   ) -> list[ConsumerResult]:
    """A row per consumer of the leader's distribution, in its order, with its next (active, standby, withheld)
    task lists from ``lists``."""
    rows: list[ConsumerResult] = []
    for pid, consumers in (outcome.group.consumers or {}).items():
        process = str(pid)
        for consumer, share in consumers.items():
            active, standby, withheld = next(lists)
            rows.append(ConsumerResult(
                process_id=process, consumer_id=consumer, active_tasks=active, standby_tasks=standby,
                withheld_tasks=withheld, followup_rebalance_deadline_ms=share.followup_rebalance_deadline,
            ))
    return rows
