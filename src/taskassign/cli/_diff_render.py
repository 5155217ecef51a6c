"""Rich renderables for a before -> after diff (``taskassign diff``, ``compare`` with one assignor and a
what-if): totals first, then the metrics that changed, then per client what it gained and lost."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.text import Text

from taskassign.analysis.diff import AssignmentDiff, MetricChange
from taskassign.cli._common import new_table
from taskassign.cli._metrics_render import metric_text
from taskassign.cli._render import task_preview
from taskassign.formats.units import human_bytes, human_count, short_ids

MAX_CLIENT_ROWS = 60
_ARROW = " -> "


def _value(name: str, value: int | float | None, in_bytes: bool) -> str:
    if value is None:
        return "-"
    if name == "state_load":
        return human_bytes(value) if in_bytes else human_count(value)
    return metric_text(name, value, in_bytes=in_bytes)


def _change(change: MetricChange, in_bytes: bool) -> str:
    return f"{_value(change.name, change.before, in_bytes)}{_ARROW}{_value(change.name, change.after, in_bytes)}"


def diff_text(diff: AssignmentDiff, *, title: str, in_bytes: bool) -> RenderableType:
    """The diff as Cruise Control's proposal summary would put it."""
    data = "unknown (give --scenario)" if diff.records_to_restore is None else (
        (f"{human_bytes(diff.data_bytes)}, " if diff.data_bytes is not None else "")
        + f"{human_count(diff.records_to_restore)} records to restore")
    totals = new_table(pad_edge=False, show_header=False)
    totals.add_column("total", no_wrap=True, style="bold")
    totals.add_column("value", no_wrap=True)
    totals.add_row("replicas moved", f"{diff.replicas_moved:,} (standby {diff.standbys_moved:,})")
    totals.add_row("actives moved", f"{diff.actives_moved:,}"
                   + (f" ({diff.promotions:,} promoted from a standby: no data to move)" if diff.promotions else ""))
    totals.add_row("data to move", data)
    totals.add_row("clients", f"{diff.clients_before}{_ARROW}{diff.clients_after}")
    parts: list[RenderableType] = [Text(title, style="bold"), totals]
    if diff.metrics:
        metrics = new_table(pad_edge=False, title="metrics that changed", title_justify="left")
        for column in ("metric", "before", "after"):
            metrics.add_column(column, justify="left" if column == "metric" else "right", no_wrap=True)
        for m in diff.metrics:
            metrics.add_row(m.name, _value(m.name, m.before, in_bytes), _value(m.name, m.after, in_bytes))
        parts.append(metrics)
    changed = diff.changed_clients
    if changed:
        short = short_ids(c.process_id for c in diff.clients)
        clients = new_table(pad_edge=False, title="per client", title_justify="left")
        clients.add_column("client", no_wrap=True)
        clients.add_column("", no_wrap=True)
        clients.add_column("tasks", justify="right", no_wrap=True)
        for column in ("active gained", "active lost", "standby gained", "standby lost", "changed"):
            clients.add_column(column, overflow="fold", ratio=1)
        for c in changed[:MAX_CLIENT_ROWS]:
            clients.add_row(
                short[c.process_id], "" if c.status == "kept" else c.status, f"{c.tasks_before}{_ARROW}{c.tasks_after}",
                task_preview(c.active_gained), task_preview(c.active_lost), task_preview(c.standby_gained),
                task_preview(c.standby_lost),
                ", ".join(f"{m.name} {_change(m, in_bytes)}" for m in c.metrics if m.name not in ("active", "standby")),
            )
        parts.append(clients)
        if len(changed) > MAX_CLIENT_ROWS:
            parts.append(Text(f"… {len(changed) - MAX_CLIENT_ROWS} more clients changed (--json lists them all)",
                              style="dim"))
    else:
        parts.append(Text("no client's tasks changed", style="green"))
    parts.extend(Text(f"not computed: {reason}", style="yellow") for reason in diff.unavailable)
    return Group(*parts)
