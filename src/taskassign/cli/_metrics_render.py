"""Rich renderables for assignment metrics (``assign --metrics``, ``simulate``)."""

from __future__ import annotations

from collections.abc import Mapping

from rich.console import Group, RenderableType

from taskassign.analysis.metrics import SECTION_STARTS, AssignmentMetrics, metric_fields
from taskassign.cli._common import new_table
from taskassign.formats.units import human_bytes, human_count, short_ids
from taskassign.ids import ProcessId
from taskassign.model import ApplicationState

MAX_CLIENT_ROWS = 40


#: Metrics that are state weights: bytes when the tasks give ``state_bytes``.
STATE_WEIGHT_METRICS = frozenset({"state_load_max", "state_load_min", "state_load_skew", "active_state_load_max",
                                  "active_state_load_min"})


def format_value(value: int | float) -> str:
    """A plain number for text: ratios with up to three decimals, large counts abbreviated (12.3 M)."""
    if isinstance(value, float) and value == int(value):
        return f"{value:.1f}"
    return human_count(value)


def state_in_bytes(state: ApplicationState) -> bool:
    """Whether state weights are bytes (some task gives ``state_bytes``) rather than store counts."""
    return any(info.state_bytes is not None for info in state.tasks.values())


def metric_text(name: str, value: int | float, *, in_bytes: bool) -> str:
    """One metric in human units: state weights as bytes when they are bytes, everything else as a number."""
    if in_bytes and name in STATE_WEIGHT_METRICS:
        return human_bytes(value)
    return format_value(value)


#: The per-client table's columns: (header, what it counts) -- short headers so that it fits 80 columns, and the
#: key printed under the table says what each one counts.
CLIENT_COLUMNS = (
    ("client", ""), ("rack", ""), ("thr", "threads"), ("act", "active tasks"), ("stb", "standby tasks"),
    ("act/thr", "active tasks per thread"), ("all/thr", "active+standby tasks per thread"),
    ("state", "state load (active+standby)"), ("in", "actives moved in"),
    ("restore", "records to restore (the client's lags)"),
)


def metrics_table(metrics: AssignmentMetrics, *, in_bytes: bool = False,
                  names: Mapping[ProcessId, str] | None = None) -> RenderableType:
    """The summary metrics, by section, then the per-client loads (clients named by ``names``)."""
    summary = new_table(pad_edge=False, title="metrics", title_justify="left")
    summary.add_column("metric", no_wrap=True)
    summary.add_column("value", justify="right", no_wrap=True)
    values = metrics.to_dict()
    for f in metric_fields():
        if f.name in SECTION_STARTS:
            summary.add_row(f"[bold dim]{SECTION_STARTS[f.name]}[/]", "")
        summary.add_row(f"  {f.name}", metric_text(f.name, values[f.name], in_bytes=in_bytes))
    clients = new_table(pad_edge=False, title="per client", title_justify="left")
    for column, _ in CLIENT_COLUMNS:
        if column in ("client", "rack"):
            clients.add_column(column, overflow="fold")
        else:
            clients.add_column(column, justify="right", no_wrap=True)
    short = short_ids(row.process_id for row in metrics.client_metrics)
    for row in metrics.client_metrics[:MAX_CLIENT_ROWS]:
        state = human_bytes(row.state_load) if in_bytes else format_value(row.state_load)
        name = (names or {}).get(row.process_id) or short[row.process_id]
        clients.add_row(name, row.rack or "-", str(row.threads), str(row.active), str(row.standby),
                        format_value(row.active_load), format_value(row.total_load), state,
                        str(row.active_moves_in), format_value(row.records_to_restore))
    key = "; ".join(f"{column} {meaning}" for column, meaning in CLIENT_COLUMNS if meaning)
    parts: list[RenderableType] = [summary, clients, f"[dim]{key}[/]"]
    if len(metrics.client_metrics) > MAX_CLIENT_ROWS:
        parts.append(f"[dim]… {len(metrics.client_metrics) - MAX_CLIENT_ROWS} more clients[/]")
    return Group(*parts)
