"""The charts of one run over time, as inline SVG, readable from 2 rebalances to thousands.

A rolling restart of a large application takes hundreds of rebalances: one bar or one dashed line per
rebalance turns into a solid smear. So past ``MAX_BARS`` rebalances the movements are summed per bin of
consecutive rebalances (with the running total beside them), and the rebalances' times and reasons get a
strip of their own under the restore chart, one row per reason, instead of lines across the data.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from taskassign.report.data import RebalanceRow, SampleRow
from taskassign.report.plots import ACTIVE_COLOUR, REASON_COLOURS, STANDBY_COLOUR, amount_axis, svg, time_axis

__all__ = ("MAX_BARS", "MAX_POINTS", "first_reason", "movements_svg", "restore_timeline_svg", "thin")

#: Above this many rebalances, movements are drawn per bin of rebalances.
MAX_BARS = 60
#: Samples drawn at most per line (evenly thinned, the first and last kept).
MAX_POINTS = 1500


def first_reason(row: RebalanceRow) -> str:
    """The reason a rebalance is coloured by: its first one."""
    return row.reasons[0] if row.reasons else "initial"


def thin(samples: Sequence[SampleRow], limit: int = MAX_POINTS) -> list[SampleRow]:
    """At most ``limit`` samples, evenly spaced, the first and the last kept."""
    if len(samples) <= limit:
        return list(samples)
    step = (len(samples) - 1) / (limit - 1)
    return [samples[round(i * step)] for i in range(limit)]


def movements_svg(rows: Sequence[RebalanceRow]) -> str:
    """Active and standby moves per rebalance (summed per bin past ``MAX_BARS``), and their running total."""
    figure = Figure(figsize=(11, 3.8), layout="constrained")
    axes = figure.subplots()
    active = [int(r.metrics.get("active_moves", 0)) for r in rows]
    standby = [int(r.metrics.get("standby_moves", 0)) for r in rows]
    size = max(1, -(-len(rows) // MAX_BARS))
    starts = list(range(0, len(rows), size))
    xs = [rows[i].index for i in starts]
    binned_active = [sum(active[i:i + size]) for i in starts]
    binned_standby = [sum(standby[i:i + size]) for i in starts]
    axes.bar(xs, binned_active, width=0.8 * size, align="edge", color=ACTIVE_COLOUR, label="active moves")
    axes.bar(xs, binned_standby, width=0.8 * size, align="edge", bottom=binned_active, color=STANDBY_COLOUR,
             label="standby moves")
    axes.set_ylim(0, max([1, *(a + b for a, b in zip(binned_active, binned_standby, strict=True))]) * 1.25)
    per = "per rebalance" if size == 1 else f"per {size} rebalances"
    axes.set_title(f"movements {per}, and in all")
    axes.set_xlabel("rebalance")
    axes.set_ylabel(f"tasks moved {per}")
    amount_axis(axes)
    running = axes.twinx()
    total, cumulative = 0, []
    for a, b in zip(active, standby, strict=True):
        total += a + b
        cumulative.append(total)
    running.step([r.index for r in rows], cumulative, where="post", color="black", linewidth=1.0,
                 label="moved in all (right axis)")
    running.set_ylim(0, max(1, total) * 1.1)
    running.set_ylabel("tasks moved in all")
    amount_axis(running)
    handles, labels = axes.get_legend_handles_labels()
    more_handles, more_labels = running.get_legend_handles_labels()
    axes.legend(handles + more_handles, labels + more_labels, fontsize=8, loc="upper left")
    return svg(figure, "movements")


def restore_timeline_svg(samples: Sequence[SampleRow], rows: Sequence[RebalanceRow]) -> str:
    """Records left to restore (actives and standbys stacked) and tasks not running over time; below, a strip
    with a tick per rebalance in the row of its reason."""
    span = max([1, *(s.offset_ms for s in samples), *(r.offset_ms for r in rows)])
    divisor, unit = time_axis(span)
    figure = Figure(figsize=(11, 5.2), layout="constrained")
    reasons = [r for r in REASON_COLOURS if any(first_reason(row) == r for row in rows)]
    axes, strip = figure.subplots(2, 1, sharex=True, height_ratios=(4, max(1, 0.45 * len(reasons))))
    drawn = thin(samples)
    xs = [s.offset_ms / divisor for s in drawn]
    active = [s.active_records_left for s in drawn]
    standby = [s.standby_records_left for s in drawn]
    axes.stackplot(xs, active, standby, colors=[ACTIVE_COLOUR, STANDBY_COLOUR],
                   labels=["actives restoring", "standbys / warm-ups restoring"], alpha=0.85)
    axes.set_title("records left to restore")
    axes.set_ylabel("records")
    amount_axis(axes)
    axes.set_ylim(0, max([1, *(a + b for a, b in zip(active, standby, strict=True))]) * 1.3)  # room for the legend
    twin = axes.twinx()
    twin.step(xs, [s.tasks_not_running for s in drawn], where="post", color="black", linewidth=1.0,
              label="tasks not running (right axis)")
    twin.set_ylabel("tasks not running")
    twin.set_ylim(0, max([1, *(s.tasks_not_running for s in drawn)]) * 1.3)
    handles, labels = axes.get_legend_handles_labels()
    more_handles, more_labels = twin.get_legend_handles_labels()
    axes.legend(handles + more_handles, labels + more_labels, fontsize=8, loc="upper right")
    for y, reason in enumerate(reasons):
        times = [r.offset_ms / divisor for r in rows if first_reason(r) == reason]
        strip.eventplot([times], lineoffsets=y, linelengths=0.7, linewidths=0.8, colors=REASON_COLOURS[reason])
    strip.set_yticks(range(len(reasons)), reasons, fontsize=8)
    strip.set_ylim(-0.6, len(reasons) - 0.4)
    strip.invert_yaxis()
    strip.set_xlabel(f"{unit} since the start")
    strip.set_title(f"{len(rows)} rebalances, by reason", fontsize=9)
    return svg(figure, "restore_timeline")
