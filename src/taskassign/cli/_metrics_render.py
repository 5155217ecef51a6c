"""Rich renderables for assignment metrics (``assign --metrics``, ``simulate``)."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table

from taskassign.analysis.metrics import SECTION_STARTS, AssignmentMetrics, metric_fields

MAX_CLIENT_ROWS = 40


def format_value(value: int | float) -> str:
    if isinstance(value, float):
        return f"{value:.3f}".rstrip("0").rstrip(".") if value != int(value) else f"{value:.1f}"
    return f"{value:,}"


def metrics_table(metrics: AssignmentMetrics) -> RenderableType:
    """The summary metrics, by section, then the per-client loads."""
    summary = Table(show_edge=False, header_style="bold", pad_edge=False, title="metrics", title_justify="left")
    summary.add_column("metric", no_wrap=True)
    summary.add_column("value", justify="right", no_wrap=True)
    values = metrics.to_dict()
    for f in metric_fields():
        if f.name in SECTION_STARTS:
            summary.add_row(f"[bold dim]{SECTION_STARTS[f.name]}[/]", "")
        summary.add_row(f"  {f.name}", format_value(values[f.name]))
    clients = Table(show_edge=False, header_style="bold", pad_edge=False, title="per client", title_justify="left")
    for column in ("client", "rack", "threads", "active", "standby", "active/thread", "total/thread",
                   "state load", "moved in", "to restore"):
        clients.add_column(column, justify="left" if column in ("client", "rack") else "right", no_wrap=True)
    for row in metrics.client_metrics[:MAX_CLIENT_ROWS]:
        clients.add_row(str(row.process_id), row.rack or "-", str(row.threads), str(row.active), str(row.standby),
                        format_value(row.active_load), format_value(row.total_load), format_value(row.state_load),
                        str(row.active_moves_in), format_value(row.records_to_restore))
    parts: list[RenderableType] = [summary, clients]
    if len(metrics.client_metrics) > MAX_CLIENT_ROWS:
        parts.append(f"[dim]… {len(metrics.client_metrics) - MAX_CLIENT_ROWS} more clients[/]")
    return Group(*parts)
