"""The report's plots, as PNG bytes (matplotlib's object API on the Agg canvas: no pyplot, no global state).

Each function draws one figure from ReportData pieces. The PNGs carry no timestamp or version metadata,
so the same data gives the same bytes.
"""

from __future__ import annotations

import io
from collections import Counter
from collections.abc import Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from taskassign.report.data import ClientLoad, RebalanceRow, SampleRow

__all__ = ("client_load_png", "movements_png", "rack_traffic_png", "restore_timeline_png")

ACTIVE_COLOUR = "#1f77b4"
STANDBY_COLOUR = "#ff7f0e"
#: Vertical markers on the timeline, by the first reason of a rebalance.
REASON_COLOURS = {
    "initial": "#7f7f7f", "join": "#2ca02c", "rejoin": "#2ca02c", "leave": "#d62728", "crash": "#d62728",
    "probing": "#9467bd", "followup": "#8c564b", "revocation": "#bcbd22", "forced": "#17becf",
}
MAX_LABELLED_CLIENTS = 30
DPI = 100


def _png(figure: Figure) -> bytes:
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


def _minutes(ms: int) -> float:
    return ms / 60_000


def client_load_png(clients: Sequence[ClientLoad]) -> bytes:
    """Left: active and standby tasks per thread of each client (heaviest first). Right: how many threads
    carry how many tasks."""
    figure = Figure(figsize=(11, 4.2), layout="constrained")
    left, right = figure.subplots(1, 2, width_ratios=(3, 2))
    ordered = sorted(clients, key=lambda c: (-(c.active + c.standby) / c.threads, c.process_id))
    xs = list(range(len(ordered)))
    active = [c.active / c.threads for c in ordered]
    standby = [c.standby / c.threads for c in ordered]
    left.bar(xs, active, color=ACTIVE_COLOUR, label="active / thread")
    left.bar(xs, standby, bottom=active, color=STANDBY_COLOUR, label="standby / thread")
    left.set_title("load per client (tasks per thread)")
    left.set_ylabel("tasks per thread")
    if len(ordered) <= MAX_LABELLED_CLIENTS:
        left.set_xticks(xs, [c.process_id[:8] for c in ordered], rotation=60, fontsize=7)
    else:
        left.set_xticks([])
        left.set_xlabel(f"{len(ordered)} clients, heaviest first")
    left.set_ylim(0, max([0.5, *(a + b for a, b in zip(active, standby, strict=True))]) * 1.25)  # room for the legend
    left.legend(loc="upper right", fontsize=8)
    totals = [n for c in clients for n in c.thread_total]
    actives = [n for c in clients for n in c.thread_active]
    top = max(totals, default=0)
    edges = [x - 0.5 for x in range(top + 2)]
    right.hist([actives, totals], bins=edges, color=[ACTIVE_COLOUR, "#aec7e8"], label=["active", "active + standby"])
    right.set_xticks(range(top + 1) if top <= 20 else range(0, top + 1, max(1, top // 10)))
    tallest = max([1, *Counter(totals).values(), *Counter(actives).values()])
    right.set_ylim(0, tallest * 1.3)
    right.set_title(f"load per thread ({len(totals)} threads)")
    right.set_xlabel("tasks on the thread")
    right.set_ylabel("threads")
    right.legend(fontsize=8)
    return _png(figure)


def movements_png(rows: Sequence[RebalanceRow]) -> bytes:
    """Active and standby moves of every rebalance (against what the clients owned before it)."""
    figure = Figure(figsize=(11, 3.6), layout="constrained")
    axes = figure.subplots()
    xs = [r.index for r in rows]
    active = [r.metrics.get("active_moves", 0) for r in rows]
    standby = [r.metrics.get("standby_moves", 0) for r in rows]
    axes.bar(xs, active, color=ACTIVE_COLOUR, label="active moves")
    axes.bar(xs, standby, bottom=active, color=STANDBY_COLOUR, label="standby moves")
    axes.set_ylim(bottom=0, top=max([1, *(a + b for a, b in zip(active, standby, strict=True))]) * 1.1)
    axes.set_title("movements per rebalance")
    axes.set_xlabel("rebalance (colour of the tick: why it happened)")
    axes.set_ylabel("tasks moved")
    if len(rows) <= 60:
        axes.set_xticks(xs, [str(x) for x in xs], fontsize=7)
        for tick, row in zip(axes.get_xticklabels(), rows, strict=True):
            tick.set_color(REASON_COLOURS.get(row.reasons[0] if row.reasons else "", "black"))
    axes.legend(fontsize=8)
    return _png(figure)


def restore_timeline_png(samples: Sequence[SampleRow], rows: Sequence[RebalanceRow]) -> bytes:
    """Records left to restore (actives and standbys, stacked) over time, tasks not running on a second
    axis, and a vertical line at every rebalance."""
    figure = Figure(figsize=(11, 4.2), layout="constrained")
    axes = figure.subplots()
    xs = [_minutes(s.offset_ms) for s in samples]
    active = [s.active_records_left for s in samples]
    standby = [s.standby_records_left for s in samples]
    axes.stackplot(xs, active, standby, colors=[ACTIVE_COLOUR, STANDBY_COLOUR],
                   labels=["actives restoring", "standbys / warm-ups restoring"], alpha=0.85)
    axes.set_title("records left to restore")
    axes.set_xlabel("minutes since the start")
    axes.set_ylabel("records")
    axes.set_ylim(0, max([1, *(a + b for a, b in zip(active, standby, strict=True))]) * 1.3)  # room for the legend
    seen: set[str] = set()
    for row in rows:
        reason = row.reasons[0] if row.reasons else "initial"
        label = None if reason in seen else f"rebalance: {reason}"
        seen.add(reason)
        axes.axvline(_minutes(row.offset_ms), color=REASON_COLOURS.get(reason, "black"), linestyle="--",
                     linewidth=0.8, label=label)
    twin = axes.twinx()
    twin.step(xs, [s.tasks_not_running for s in samples], where="post", color="black", linewidth=1.0,
              label="tasks not running")
    twin.set_ylabel("tasks not running")
    twin.set_ylim(0, max([1, *(s.tasks_not_running for s in samples)]) * 1.3)
    handles, labels = axes.get_legend_handles_labels()
    more_handles, more_labels = twin.get_legend_handles_labels()
    axes.legend(handles + more_handles, labels + more_labels, fontsize=7, loc="upper right")
    return _png(figure)


def rack_traffic_png(cells: Sequence[tuple[str, str, float]]) -> bytes:
    """Partitions read per (client rack, partition rack); off-diagonal cells are cross-rack traffic."""
    rows = sorted({r for r, _, _ in cells})
    cols = sorted({c for _, c, _ in cells})
    grid = [[0.0 for _ in cols] for _ in rows]
    for r, c, value in cells:
        grid[rows.index(r)][cols.index(c)] += value
    figure = Figure(figsize=(max(4.5, 1.1 * len(cols) + 3), max(3.2, 0.6 * len(rows) + 2)), layout="constrained")
    axes = figure.subplots()
    if not cells:
        axes.text(0.5, 0.5, "no partitions read", ha="center", va="center")
        axes.set_axis_off()
        return _png(figure)
    image = axes.imshow(grid, cmap="Blues", aspect="auto")
    figure.colorbar(image, ax=axes, label="partitions read")
    axes.set_xticks(range(len(cols)), cols)
    axes.set_yticks(range(len(rows)), rows)
    axes.set_xlabel("rack of the partition's replicas")
    axes.set_ylabel("rack of the client")
    axes.set_title("rack traffic (off the diagonal: cross-rack)")
    peak = max(max(line) for line in grid) or 1.0
    for i, line in enumerate(grid):
        for j, value in enumerate(line):
            if value:
                axes.text(j, i, f"{value:g}", ha="center", va="center", fontsize=8,
                          color="white" if value > peak / 2 else "black")
    return _png(figure)
