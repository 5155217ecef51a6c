"""``taskassign predict-check HISTORY``: each change of a watched group predicted from the capture before it with
the matching what-if, and checked against what Kafka did (api/predict_check.py)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from taskassign.cli._app import app
from taskassign.cli._common import EXIT_FAILED, handle_errors, stderr_console, stdout_console
from taskassign.cli._options import json_option

if TYPE_CHECKING:
    from rich.console import RenderableType

    from taskassign.api.prediction import ChangeCheck, HistoryCheck

#: Differences listed per change in text (all of them in --json).
SHOWN_MISSES = 8


@app.command("predict-check")
@handle_errors
def predict_check(
    history: Path = typer.Argument(..., help="A history directory `taskassign capture --watch -o DIR` wrote (classic "
                                             "or streams group)."),
    as_json: Annotated[bool, json_option("Print every change, task and cause as JSON.")] = False,
) -> None:
    """How exact is a what-if? Each change the group went through is predicted from the capture before it with
    the matching what-if (--remove-client, --add-clients, --set) and the assignor the group runs, then
    checked against Kafka's assignment: tasks placed as Kafka placed them, and a named cause for every
    difference (exit 1 when a difference has no cause but taskassign's own replay)."""
    from taskassign.api.predict_check import check_history
    from taskassign.api.prediction import CAUSE_REPLAY
    from taskassign.formats.json_io import to_json_text

    errors = stderr_console()
    with errors.status(f"predicting the changes in {history}") as status:
        result = check_history(history, progress=lambda step: status.update(f"predicting {step}"))
    if as_json:
        stdout_console().out(to_json_text(_document(result)), end="")
    else:
        stdout_console().print(_text(result, history))
    if any(m.cause == CAUSE_REPLAY for c in result.checks for m in c.misses):
        raise typer.Exit(EXIT_FAILED)


def _document(result: HistoryCheck) -> dict[str, Any]:
    return {
        "format": "taskassign/predict-check/v1",
        "protocol": result.protocol,
        "files": list(result.files),
        "changes": [{
            "before": c.before, "after": c.after, "change": c.change, "what_if": list(c.what_if),
            "assignor": c.assignor, "skipped": c.skipped, "tasks": c.tasks, "actives_right": c.actives_right,
            "standbys": c.standbys, "standbys_right": c.standbys_right, "inputs_moved": list(c.inputs_moved),
            "exact_expected": c.exact_expected, "exact": c.exact, "notes": list(c.notes),
            "causes": [{"cause": cause, "differences": n} for cause, n in c.causes()],
            "differences": [{"task": m.task, "kind": m.kind, "predicted": list(m.predicted), "kafka": list(m.kafka),
                             "cause": m.cause} for m in c.misses],
        } for c in result.checks],
        "totals": _totals(result),
    }


def _totals(result: HistoryCheck) -> dict[str, int]:
    done = result.predicted
    return {"changes": len(result.checks), "predicted": len(done), "exact": sum(c.exact for c in done),
            "tasks": sum(c.tasks for c in done), "actives_right": sum(c.actives_right for c in done),
            "standbys": sum(c.standbys for c in done), "standbys_right": sum(c.standbys_right for c in done)}


def _share(right: int, total: int) -> str:
    return f"{right} of {total}" + (f" ({100 * right / total:.0f}%)" if total else "")


def _text(result: HistoryCheck, history: Path) -> RenderableType:
    from rich.console import Group
    from rich.markup import escape
    from rich.text import Text

    lines: list[RenderableType] = [Text(f"{len(result.files)} captures of a {result.protocol} group, "
                                        f"{len(result.checks)} change(s)", style="bold")]
    for c in result.checks:
        lines.extend(_change_lines(c))
    t = _totals(result)
    lines.append(Text(""))
    lines.append(Text(f"predicted {t['predicted']} of {t['changes']} change(s), {t['exact']} exactly; actives "
                      f"where Kafka put them: {_share(t['actives_right'], t['tasks'])}; standbys: "
                      f"{_share(t['standbys_right'], t['standbys'])}", style="bold"))
    lines.append(Text(f"every difference: taskassign predict-check {escape(str(history))} --json; how exact a "
                      "what-if is, and why: docs/what-if.md", style="dim"))
    return Group(*lines)


def _change_lines(c: ChangeCheck) -> list[RenderableType]:
    from rich.text import Text

    out: list[RenderableType] = [Text(""), Text(f"{c.before} -> {c.after}: {c.change}", style="bold")]
    if c.skipped is not None:
        out.append(Text(f"  {c.skipped}", style="yellow"))
        return out
    if c.what_if:
        out.append(Text(f"  what-if: {' '.join(c.what_if)} (assignor {c.assignor})"))
    else:
        out.append(Text(f"  what-if: none, the same clients (assignor {c.assignor})"))
    verdict = "exactly Kafka's assignment" if c.exact else "differs from Kafka's"
    out.append(Text(f"  actives {_share(c.actives_right, c.tasks)}, standbys {_share(c.standbys_right, c.standbys)}: "
                    f"{verdict}", style="green" if c.exact else ""))
    if not c.inputs_moved:
        out.append(Text("  no input but the membership moved: the prediction must be exact", style="dim"))
    else:
        out.append(Text(f"  inputs that moved: {len(c.inputs_moved)} kind(s)", style="dim"))
    for cause, n in c.causes():
        out.append(Text(f"  {n} difference(s): {cause}", style="yellow"))
    for m in c.misses[:SHOWN_MISSES]:
        out.append(Text(f"    task {m.task} {m.kind}: predicted {_clients(m.predicted)}, Kafka {_clients(m.kafka)}",
                        style="dim"))
    if len(c.misses) > SHOWN_MISSES:
        out.append(Text(f"    ... {len(c.misses) - SHOWN_MISSES} more (--json)", style="dim"))
    out.extend(Text(f"  note: {n}", style="dim") for n in c.notes)
    return out


def _clients(names: tuple[str, ...]) -> str:
    return ", ".join(n[:8] for n in names) if names else "none"
