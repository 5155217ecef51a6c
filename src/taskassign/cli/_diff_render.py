"""Rich renderables for a before -> after diff (``taskassign diff``, ``compare`` with one assignor and a
what-if): totals first, then the metrics that changed, then per client what it gained and lost."""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Group, RenderableType
from rich.text import Text

from taskassign.analysis.diff import AssignmentDiff
from taskassign.cli._common import new_table
from taskassign.cli._metrics_render import metric_text
from taskassign.cli._render import task_preview
from taskassign.formats.units import human_bytes, human_count, short_ids
from taskassign.ids import ProcessId

MAX_CLIENT_ROWS = 60
_ARROW = " -> "


def _value(name: str, value: int | float | None, in_bytes: bool) -> str:
    if value is None:
        return "-"
    if name == "state_load":
        return human_bytes(value) if in_bytes else human_count(value)
    return metric_text(name, value, in_bytes=in_bytes)


def diff_text(diff: AssignmentDiff, *, title: str, in_bytes: bool, names: Mapping[ProcessId, str] | None = None,
              against: str = "before") -> RenderableType:
    """The diff as Cruise Control's proposal summary would put it; clients named by ``names``, ``against`` says
    what the "before" side is (the totals count against it, the movement metrics against the clients' previous
    assignment)."""
    data = "unknown (give --scenario)" if diff.records_to_restore is None else (
        (f"{human_bytes(diff.data_bytes)}, " if diff.data_bytes is not None else "")
        + f"{human_count(diff.records_to_restore)} records to restore")
    totals = new_table(pad_edge=False, show_header=False, title=f"totals (against {against})", title_justify="left")
    totals.add_column("total", no_wrap=True, style="bold")
    totals.add_column("value", overflow="fold")
    totals.add_row("replicas moved", f"{diff.replicas_moved:,} (standby {diff.standbys_moved:,})")
    totals.add_row("actives moved", f"{diff.actives_moved:,}"
                   + (f" ({diff.promotions:,} promoted from a standby: no data to move)" if diff.promotions else ""))
    totals.add_row("data to move", data + (f" (replicas new to their client against {against}, at the after "
                                           "side's lags)" if diff.records_to_restore is not None else ""))
    totals.add_row("clients", f"{diff.clients_before}{_ARROW}{diff.clients_after}")
    parts: list[RenderableType] = [Text(title, style="bold"), totals]
    if diff.metrics:
        metrics = new_table(pad_edge=False, title="metrics that changed (moves and records_to_restore count "
                            "against the clients' previous assignment)", title_justify="left")
        for column in ("metric", "before", "after"):
            metrics.add_column(column, justify="left" if column == "metric" else "right", no_wrap=True)
        for m in diff.metrics:
            metrics.add_row(m.name, _value(m.name, m.before, in_bytes), _value(m.name, m.after, in_bytes))
        parts.append(metrics)
    changed = diff.changed_clients
    if changed:
        short = short_ids(c.process_id for c in diff.clients)
        label = {c.process_id: (names or {}).get(c.process_id) or short[c.process_id] for c in diff.clients}
        clients = new_table(pad_edge=False, title="per client: tasks gained (+) and lost (-)", title_justify="left")
        clients.add_column("client", overflow="fold")
        clients.add_column("tasks", justify="right", no_wrap=True)
        for column in ("+active", "-active", "+standby", "-standby"):
            clients.add_column(column, overflow="fold", ratio=1)
        changes = new_table(pad_edge=False, title="per client: metrics that changed", title_justify="left")
        changes.add_column("client", overflow="fold")
        changes.add_column("metric", no_wrap=True)
        for column in ("before", "after"):
            changes.add_column(column, justify="right", no_wrap=True)
        for c in changed[:MAX_CLIENT_ROWS]:
            name = label[c.process_id] + ("" if c.status == "kept" else f" ({c.status})")
            clients.add_row(
                name, f"{c.tasks_before}{_ARROW}{c.tasks_after}", task_preview(c.active_gained),
                task_preview(c.active_lost), task_preview(c.standby_gained), task_preview(c.standby_lost),
            )
            for m in c.metrics:
                if m.name not in ("active", "standby"):
                    changes.add_row(label[c.process_id], m.name, _value(m.name, m.before, in_bytes),
                                    _value(m.name, m.after, in_bytes))
        parts.append(clients)
        if changes.row_count:
            parts.append(changes)
        if len(changed) > MAX_CLIENT_ROWS:
            parts.append(Text(f"… {len(changed) - MAX_CLIENT_ROWS} more clients changed (--json lists them all)",
                              style="dim"))
    else:
        parts.append(Text("no client's tasks changed", style="green"))
    parts.extend(Text(f"not computed: {reason}", style="yellow") for reason in diff.unavailable)
    return Group(*parts)
