"""The service's audit log: one JSON line per decision (``taskassign/bridge-audit/v1``).

A record keeps what the service saw and said: the time, the application, the protocol, the input (the scenario
built from the posted ApplicationState, or the streams group), the assignor, where the answer came from
(``computed``, ``plan`` or ``error``), the plan applied or why an approved plan was not, the assignor's own
fallback, the time taken, the assignment document and the answer. ``record_files`` turns a record back into a
scenario and an assignment file: ``taskassign assign SCENARIO -a ASSIGNOR`` reproduces the assignment file byte
for byte, and ``rebalance``/``compare``/``report`` read the scenario as any other.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from taskassign.errors import UserInputError
from taskassign.formats.json_io import dump_json, load_json_text
from taskassign.formats.output_paths import OutputGuard

__all__ = ("AUDIT_FORMAT", "AuditLog", "find_record", "read_audit", "record_files")

AUDIT_FORMAT = "taskassign/bridge-audit/v1"


class AuditLog:
    """An append-only JSON-lines file, safe to share between the service's threads."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)

    def append(self, record: dict[str, Any]) -> None:
        if self.path is None:
            return
        line = json.dumps({"format": AUDIT_FORMAT, **record}, ensure_ascii=False, separators=(",", ":")) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as out:
            out.write(line)


def read_audit(path: Path) -> Iterator[dict[str, Any]]:
    """Every record of an audit log, oldest first (a line that is not a record is a UserInputError)."""
    try:
        handle = path.open(encoding="utf-8")
    except OSError as exc:
        raise UserInputError(f"{path}: cannot read the audit log ({exc.strerror})") from None
    with handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            record = load_json_text(line, f"{path}:{number}")  # NaN, a duplicate key: named errors too
            if not isinstance(record, dict) or record.get("format") != AUDIT_FORMAT:
                raise UserInputError(f"{path}:{number}: not a {AUDIT_FORMAT} record")
            yield record


def find_record(path: Path, decision: str | None) -> dict[str, Any]:
    """The record of decision ``decision`` (an id, or its unique prefix), or the last one when None."""
    last: dict[str, Any] | None = None
    found: list[dict[str, Any]] = []
    for record in read_audit(path):
        last = record
        if decision is not None and str(record.get("decision_id", "")).startswith(decision):
            found.append(record)
    if decision is None:
        if last is None:
            raise UserInputError(f"{path}: the audit log has no records")
        return last
    if not found:
        raise UserInputError(f"{path}: no decision {decision!r}")
    if len(found) > 1:
        raise UserInputError(f"{path}: {len(found)} decisions start with {decision!r}; give more of the id")
    return found[0]


def record_files(record: dict[str, Any], out_dir: Path, guard: OutputGuard | None = None) -> list[Path]:
    """Write a record's input and output: ``<decision>.scenario.json`` (or ``.streams-group.json``) and
    ``<decision>.assignment.json``, the file ``assign`` writes for it, where ``guard`` allows
    (formats.output_paths). Returns the paths written."""
    decision = str(record.get("decision_id", "decision"))
    names = {key: f"{decision}.{suffix}" for key, suffix in (
        ("scenario", "scenario.json"), ("streams_group", "streams-group.json"), ("assignment", "assignment.json"))}
    (guard or OutputGuard()).directory(out_dir, [names[key] for key in names if record.get(key) is not None])
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    if record.get("scenario") is not None:
        path = out_dir / f"{decision}.scenario.json"
        dump_json(record["scenario"], path)
        written.append(path)
    if record.get("streams_group") is not None:
        path = out_dir / f"{decision}.streams-group.json"
        dump_json(record["streams_group"], path)
        written.append(path)
    if record.get("assignment") is not None:
        path = out_dir / f"{decision}.assignment.json"
        dump_json(_named(record["assignment"], record.get("scenario")), path)
        written.append(path)
    if not written:
        raise UserInputError(f"decision {decision} kept no input (it was rejected: {record.get('error')})")
    return written


def _named(assignment: Any, scenario: Any) -> Any:
    """The assignment as ``assign`` writes it: each client's name beside its process id (formats.client_names)."""
    from taskassign.formats.client_names import names_for_states, with_client_names
    from taskassign.formats.scenario import parse_scenario

    if not isinstance(assignment, dict) or not isinstance(scenario, dict) or "clients" not in assignment:
        return assignment
    try:
        state = parse_scenario(scenario).state
    except UserInputError:
        return assignment
    return with_client_names(dict(assignment), names_for_states(state))
