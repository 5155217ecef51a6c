"""Assignment files (``taskassign/assignment/v1``, see docs/formats.md): read and write.

Writing takes the leader's GroupAssignment; reading gives back a TaskAssignment (for
``taskassign validate``) without judging it: unknown clients or tasks are for the validator to
report, only malformed documents are errors here. Readers that use an assignment without validating it
(``diff``) call ``check_assignment``: the checks of ``validate`` that need no application.
"""

from __future__ import annotations

from collections.abc import Container, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from taskassign.errors import ProcessIdFormatError, TaskIdFormatError, UserInputError
from taskassign.formats.json_io import JsonObject, describe, dump_json, fail, load_json_file
from taskassign.ids import ProcessId, TaskId
from taskassign.model import (
    AssignmentError,
    GroupAssignment,
    KafkaStreamsAssignment,
    TaskAssignment,
)
from taskassign.validation import assignment_problem

__all__ = (
    "ASSIGNMENT_FORMAT",
    "WHAT_IF",
    "AssignmentDocument",
    "assignment_to_dict",
    "check_assignment",
    "read_assignment",
    "write_assignment",
)

ASSIGNMENT_FORMAT = "taskassign/assignment/v1"
#: Top-level keys other producers (goldens, optimisers, metrics, explanations) may add.
EXTRA_KEYS = ("golden", "optimizer_cost", "metrics", "explanations", "completeness", "details", "what_if",
              "kafka_version", "verdict")
#: The key under which an assignment computed on an altered input (the what-if flags) lists what was altered.
WHAT_IF = "what_if"


@dataclass(frozen=True, slots=True)
class AssignmentDocument:
    """A decoded assignment file."""

    assignor: str
    error: AssignmentError
    probing_rebalance_needed: bool
    assignment: TaskAssignment
    extras: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))


def read_assignment(path: str | Path) -> AssignmentDocument:
    """Read an assignment file. A task listed as both active and standby of one client is kept as two
    entries for that client, so that validation can report it rather than the reader hiding it."""
    p = Path(path)
    doc = load_json_file(p)
    return parse_assignment(doc, source=str(p))


def parse_assignment(doc: Any, *, source: str | None = None) -> AssignmentDocument:
    root = JsonObject(doc, "$", source)
    root.expect_format(ASSIGNMENT_FORMAT)
    assignor = root.string("assignor", "unknown")
    error_name = root.string("error", "NONE")
    try:
        error = AssignmentError[error_name]
    except KeyError:
        root.fail("error", f"unknown AssignmentError {error_name!r}; one of "
                           f"{', '.join(e.name for e in AssignmentError)}")
    probing = root.boolean("probing_rebalance_needed", False)
    clients = root.obj("clients")
    entries: list[KafkaStreamsAssignment] = []
    for text in clients.data:
        entry = clients.obj(text)
        pid = _pid(text, entry.path, source)
        active = _tasks(entry, "active")
        standby = _tasks(entry, "standby")
        deadline = entry.integer("followup_rebalance_deadline_ms", None, minimum=0, nullable=True)
        entry.raw("consumers", None)
        entry.string("name", None, nullable=True)  # the client's name in text outputs (formats.client_names)
        entry.finish()
        both = set(active) & set(standby)
        main = KafkaStreamsAssignment.of_tasks(pid, active, [t for t in standby if t not in both])
        if deadline is not None:
            main = main.with_followup_rebalance(deadline)
        entries.append(main)
        if both:
            entries.append(KafkaStreamsAssignment.of_tasks(pid, standby=sorted(both)))
    extras = {k: root.raw(k) for k in EXTRA_KEYS if root.has(k)}
    if "metrics" in extras:
        _check_metrics(root.obj("metrics"))
    root.finish()
    return AssignmentDocument(assignor, error, probing, TaskAssignment(tuple(entries), probing),
                              MappingProxyType(extras))


def _check_metrics(metrics: JsonObject) -> None:
    """The file's own metrics (``assign --metrics``; ``diff`` compares them) are finite numbers, each named."""
    for name, value in metrics.data.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            fail(metrics.sub(name), f"a metric must be a number, got {describe(value)}", metrics.source)


def check_assignment(document: AssignmentDocument, *, source: str, tasks: Container[TaskId] | None = None) -> None:
    """Refuse an assignment that ``validate`` would refuse for reasons that need no more than the application's
    ``tasks`` (none: an active task on two clients, a task active and standby on one client; with them, an
    unknown task too): a UserInputError naming the error, the task and the clients."""
    problem = assignment_problem(document.assignment, tasks)
    if problem is not None:
        error, detail = problem
        raise UserInputError(f"{source}: not a valid assignment ({error.name}: {detail}); `taskassign validate` "
                             "reports it against the application")


def _pid(text: str, path: str, source: str | None) -> ProcessId:
    try:
        return ProcessId(text)
    except ProcessIdFormatError as exc:
        fail(path, str(exc), source)


def _tasks(entry: JsonObject, key: str) -> list[TaskId]:
    result = []
    for j, text in enumerate(entry.string_list(key, [])):
        try:
            result.append(TaskId.parse(text))
        except TaskIdFormatError as exc:
            fail(f"{entry.sub(key)}[{j}]", str(exc), entry.source)
    return result


def assignment_to_dict(
    group: GroupAssignment,
    *,
    assignor: str,
    error: AssignmentError = AssignmentError.NONE,
    probing_rebalance_needed: bool = False,
    extras: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``taskassign/assignment/v1`` document of a group assignment (clients in ProcessId order)."""
    clients: dict[str, Any] = {}
    for pid, assignment in group.clients.items():
        client: dict[str, Any] = {
            "active": [str(t) for t in assignment.active_tasks()],
            "standby": [str(t) for t in assignment.standby_tasks()],
            "followup_rebalance_deadline_ms": assignment.followup_rebalance_deadline,
        }
        if group.consumers is not None and pid in group.consumers:
            client["consumers"] = {
                consumer: {
                    "active": [str(t) for t in sorted(ca.active)],
                    "standby": [str(t) for t in sorted(ca.standby)],
                    "withheld": [str(t) for t in sorted(ca.withheld)],
                    "followup_rebalance_deadline_ms": ca.followup_rebalance_deadline,
                }
                for consumer, ca in group.consumers[pid].items()
            }
        clients[str(pid)] = client
    doc: dict[str, Any] = {
        "format": ASSIGNMENT_FORMAT,
        "assignor": assignor,
        "error": error.name,
        "probing_rebalance_needed": probing_rebalance_needed,
        "clients": clients,
    }
    for key, value in (extras or {}).items():
        if key not in EXTRA_KEYS:
            raise ValueError(f"unknown assignment extra {key!r}; allowed: {', '.join(EXTRA_KEYS)}")
        doc[key] = value
    return doc


def write_assignment(doc: Mapping[str, Any], path: str | Path) -> None:
    dump_json(dict(doc), path)


