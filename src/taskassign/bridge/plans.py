"""Plans: an assignment computed ahead of a rebalance, reviewed (before -> after), approved, then answered by the
service for as long as it still fits the group (the same tasks, the same processes).

A plan file (``taskassign/bridge-plan/v1``) carries the application id, the assignor that computed it, the task
and process ids it was computed for, every client's active and standby tasks and the diff the operator saw.
Its ``plan_id`` is a digest of what it assigns, so the audit log can name the plan a rebalance applied.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from taskassign.errors import UserInputError
from taskassign.formats.json_io import JsonObject, dump_json, fail, load_json_file
from taskassign.formats.output_paths import OutputGuard
from taskassign.formats.scenario import Scenario
from taskassign.ids import ProcessId
from taskassign.streams_protocol.model import StreamsGroup, StreamsGroupAssignment

__all__ = (
    "PLAN_FORMAT",
    "answer_problem",
    "approved_streams_plans",
    "load_approved",
    "make_plan",
    "make_streams_plan",
    "parse_plan",
    "plan_misfit",
    "store_approved",
    "streams_members_answer",
)

PLAN_FORMAT = "taskassign/bridge-plan/v1"
_SAFE = re.compile(r"[^A-Za-z0-9._-]")


def plan_id(tasks: list[str], processes: list[str], clients: Mapping[str, Any]) -> str:
    text = json.dumps([tasks, processes, clients], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def make_plan(scenario: Scenario, application_id: str, assignor: str, clients: Mapping[str, Any],
              diff: Mapping[str, Any] | None, created_ms: int) -> dict[str, Any]:
    """A plan document for ``scenario``'s application (``clients``: the answer's per-process tasks)."""
    tasks = sorted(str(t) for t in scenario.state.tasks)
    processes = sorted(str(p) for p in scenario.state.clients)
    return _plan("classic", tasks, processes, application_id, assignor, clients, diff, created_ms)


def make_streams_plan(group: StreamsGroup, application_id: str, assignor: str, assignment: StreamsGroupAssignment,
                      created_ms: int) -> dict[str, Any]:
    """A plan for a streams group (KIP-1071): its "clients" are the members, tasks named ``subtopology:partition``.
    Kafka 4.4's GroupSpec carries no group id, so the service matches a streams plan by fit alone (the same
    members, the same tasks)."""
    tasks = sorted(streams_task(s.id, p) for s in group.subtopologies for p in range(s.partitions))
    members = sorted(m.member_id for m in group.members)
    clients = {member: {"active": sorted(streams_task(sid, p) for sid, ps in a.active_tasks.items() for p in ps),
                        "standby": sorted(streams_task(sid, p) for sid, ps in a.standby_tasks.items() for p in ps)}
               for member, a in assignment.members.items()}
    return _plan("streams", tasks, members, application_id, assignor, clients, None, created_ms)


def streams_task(subtopology: str, partition: int) -> str:
    return f"{subtopology}:{partition}"


def streams_members_answer(plan: Mapping[str, Any]) -> dict[str, Any]:
    """A streams plan's assignment as the broker plug-in reads an answer: ``{member: {"activeTasks": ...}}``."""
    def task_map(names: list[str]) -> dict[str, list[int]]:
        result: dict[str, list[int]] = {}
        for name in names:
            sid, _, partition = name.rpartition(":")
            result.setdefault(sid, []).append(int(partition))
        return {sid: sorted(ps) for sid, ps in sorted(result.items())}

    return {member: {"activeTasks": task_map(c["active"]), "standbyTasks": task_map(c["standby"])}
            for member, c in sorted(plan["clients"].items())}


def _plan(protocol: str, tasks: list[str], processes: list[str], application_id: str, assignor: str,
          clients: Mapping[str, Any], diff: Mapping[str, Any] | None, created_ms: int) -> dict[str, Any]:
    plain = {pid: {"active": list(c["active"]), "standby": list(c["standby"])} for pid, c in sorted(clients.items())}
    problem = answer_problem(plain, tasks, processes)
    if problem is not None:
        raise UserInputError(f"the assignment {assignor} computed is not a valid plan: {problem}")
    return {"format": PLAN_FORMAT, "plan_id": plan_id(tasks, processes, plain), "application_id": application_id,
            "protocol": protocol, "assignor": assignor, "created_ms": created_ms, "tasks": tasks,
            "processes": processes, "clients": plain, "diff": dict(diff) if diff is not None else None}


def parse_plan(doc: Any, *, source: str | None = None) -> dict[str, Any]:
    """Validate a plan document (its assignment too, and that its id matches what it assigns)."""
    root = JsonObject(doc, "$", source)
    root.expect_format(PLAN_FORMAT)
    pid = root.string("plan_id", non_empty=True)
    app = root.string("application_id", non_empty=True)
    root.string("assignor")
    root.integer("created_ms", 0, minimum=0)
    protocol = root.string("protocol", "classic")
    if protocol not in ("classic", "streams"):
        root.fail("protocol", f"expected 'classic' or 'streams', got {protocol!r}")
    tasks = root.string_list("tasks")
    processes = root.string_list("processes")
    clients = root.obj("clients")
    root.raw("diff", None)
    root.finish()
    plain: dict[str, Any] = {}
    for proc in clients.data:
        entry = clients.obj(proc)
        plain[proc] = {"active": entry.string_list("active", []), "standby": entry.string_list("standby", [])}
        entry.finish()
    problem = answer_problem(plain, tasks, processes)
    if problem is not None:
        fail("$.clients", problem, source)
    if plan_id(sorted(tasks), sorted(processes), dict(sorted(plain.items()))) != pid:
        fail("$.plan_id", "does not match the plan's assignment (was the file edited after `taskassign plan`?)",
             source)
    if _SAFE.sub("", app) == "":
        fail("$.application_id", "needs at least one letter, digit, '.', '_' or '-'", source)
    return {**doc, "protocol": protocol}


def answer_problem(clients: Mapping[str, Any], tasks: list[str], processes: list[str]) -> str | None:
    """What makes ``clients`` (process -> active/standby task ids) invalid for these tasks and processes, or
    None: the checks the Java side makes before applying an answer."""
    known_tasks, known_processes = set(tasks), set(processes)
    owner: dict[str, str] = {}
    for proc, entry in clients.items():
        if proc not in known_processes:
            return f"unknown process {proc}"
        seen: set[str] = set()
        for kind in ("active", "standby"):
            for task in entry.get(kind, []):
                if task not in known_tasks:
                    return f"unknown task {task}"
                if task in seen:
                    return f"task {task} twice on client {proc}"
                seen.add(task)
                if kind == "active":
                    if task in owner:
                        return f"task {task} active on {owner[task]} and {proc}"
                    owner[task] = proc
    missing = sorted(known_tasks - owner.keys())
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        return f"task {missing[0]} has no active owner{more}"
    return None


def plan_misfit(plan: Mapping[str, Any], tasks: list[str], processes: list[ProcessId] | list[str]) -> str | None:
    """Why an approved plan no longer fits the group (tasks or processes differ), or None."""
    now_tasks, now_procs = set(tasks), {str(p) for p in processes}
    plan_tasks, plan_procs = set(plan["tasks"]), set(plan["processes"])
    reasons = []
    if now_tasks != plan_tasks:
        reasons.append(f"tasks differ ({len(now_tasks - plan_tasks)} new, {len(plan_tasks - now_tasks)} gone)")
    if now_procs != plan_procs:
        reasons.append(f"processes differ ({len(now_procs - plan_procs)} new, {len(plan_procs - now_procs)} gone)")
    return "; ".join(reasons) or None


def _plan_path(state_dir: Path, application_id: str) -> Path:
    digest = hashlib.sha256(application_id.encode()).hexdigest()[:8]
    return state_dir / "plans" / f"{_SAFE.sub('_', application_id)}-{digest}.plan.json"


def store_approved(state_dir: Path, plan: Mapping[str, Any], guard: OutputGuard | None = None) -> Path:
    """Keep ``plan`` as its application's approved plan (replacing the one before; ``guard``: where it may be
    written, formats.output_paths)."""
    path = (guard or OutputGuard()).file(_plan_path(state_dir, plan["application_id"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    dump_json(dict(plan), path)
    return path


def load_approved(state_dir: Path | None, application_id: str) -> dict[str, Any] | None:
    """The application's approved plan, or None."""
    if state_dir is None:
        return None
    path = _plan_path(state_dir, application_id)
    if not path.exists():
        return None
    return parse_plan(load_json_file(path), source=str(path))


def approved_streams_plans(state_dir: Path | None) -> list[dict[str, Any]]:
    """Every approved streams-group plan (newest first): the service answers the first that fits."""
    if state_dir is None or not (state_dir / "plans").is_dir():
        return []
    plans = []
    for path in sorted((state_dir / "plans").glob("*.plan.json")):
        doc = load_json_file(path)
        if isinstance(doc, dict) and doc.get("protocol") == "streams":
            plans.append(parse_plan(doc, source=str(path)))
    return sorted(plans, key=lambda p: -int(p.get("created_ms", 0)))


def withdraw_approved(state_dir: Path, application_id: str) -> bool:
    """Forget the application's approved plan; False when there was none."""
    path = _plan_path(state_dir, application_id)
    if not path.exists():
        return False
    path.unlink()
    return True
