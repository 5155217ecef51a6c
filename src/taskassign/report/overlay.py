"""The charts of ``taskassign compare --out``: several assignors on one input, one line each, on shared axes.

Each assignor keeps its colour on every chart (``ASSIGNOR_COLOURS``, in the order named; the page's legend
shows them). Lines, not bars, so four assignors over hundreds of rebalances stay apart.
"""

from __future__ import annotations

from collections.abc import Sequence

from matplotlib.figure import Figure

from taskassign.report.data import ReportData
from taskassign.report.plots import ASSIGNOR_COLOURS, amount_axis, svg, time_axis
from taskassign.report.timeline import thin

__all__ = ("assignor_colour", "movements_overlay_svg", "restore_overlay_svg", "thread_state_overlay_svg")


def assignor_colour(position: int) -> str:
    return ASSIGNOR_COLOURS[position % len(ASSIGNOR_COLOURS)]


def thread_state_overlay_svg(runs: Sequence[ReportData]) -> str:
    """Left: every thread's state load over the mean per thread, heaviest first (1.0 is even), per assignor.
    Right: the same for tasks (active + standby) per thread."""
    figure = Figure(figsize=(11, 4.0), layout="constrained")
    state, tasks = figure.subplots(1, 2)
    for position, run in enumerate(runs):
        colour = assignor_colour(position)
        for axes, values in ((state, [n for c in run.clients for n in c.thread_state]),
                             (tasks, [n for c in run.clients for n in c.thread_total])):
            loads = sorted(values, reverse=True)
            mean = sum(loads) / len(loads) if loads else 0
            if not mean:
                continue
            axes.step(range(1, len(loads) + 1), [n / mean for n in loads], where="mid", color=colour,
                      linewidth=1.4, label=run.assignor)
    for axes, what in ((state, "state"), (tasks, "tasks (active + standby)")):
        axes.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
        axes.set_title(f"{what} per thread / mean")
        axes.set_xlabel("threads, heaviest first")
        axes.set_ylabel("load / mean load per thread")
        axes.set_ylim(bottom=0)
        if axes.get_legend_handles_labels()[0]:
            axes.legend(fontsize=8, loc="upper right")
    return svg(figure, "thread_state_overlay")


def _span(runs: Sequence[ReportData]) -> tuple[float, str]:
    return time_axis(max([1, *(s.offset_ms for run in runs for s in run.samples),
                          *(r.offset_ms for run in runs for r in run.rebalances)]))


def restore_overlay_svg(runs: Sequence[ReportData]) -> str:
    """Records left to restore (actives and standbys) and tasks not running over time, per assignor."""
    divisor, unit = _span(runs)
    figure = Figure(figsize=(11, 5.0), layout="constrained")
    records, idle = figure.subplots(2, 1, sharex=True, height_ratios=(3, 2))
    for position, run in enumerate(runs):
        drawn = thin(run.samples)
        xs = [s.offset_ms / divisor for s in drawn]
        colour = assignor_colour(position)
        records.plot(xs, [s.active_records_left + s.standby_records_left for s in drawn], color=colour,
                     linewidth=1.3, label=run.assignor)
        idle.step(xs, [s.tasks_not_running for s in drawn], where="post", color=colour, linewidth=1.2,
                  label=run.assignor)
    records.set_title("records left to restore")
    records.set_ylabel("records")
    amount_axis(records)
    records.set_ylim(bottom=0)
    records.legend(fontsize=8, loc="upper right")
    idle.set_title("tasks not running", fontsize=10)
    idle.set_ylabel("tasks")
    idle.set_ylim(bottom=0)
    idle.set_xlabel(f"{unit} since the start")
    return svg(figure, "restore_overlay")


def movements_overlay_svg(runs: Sequence[ReportData]) -> str:
    """Tasks moved (active + standby) and rebalances so far, over time, per assignor."""
    divisor, unit = _span(runs)
    figure = Figure(figsize=(11, 4.0), layout="constrained")
    moved, count = figure.subplots(1, 2)
    for position, run in enumerate(runs):
        colour = assignor_colour(position)
        xs = [r.offset_ms / divisor for r in run.rebalances]
        total, cumulative = 0, []
        for r in run.rebalances:
            total += int(r.metrics.get("active_moves", 0)) + int(r.metrics.get("standby_moves", 0))
            cumulative.append(total)
        moved.step(xs, cumulative, where="post", color=colour, linewidth=1.3, label=run.assignor)
        count.step(xs, range(1, len(xs) + 1), where="post", color=colour, linewidth=1.3, label=run.assignor)
    moved.set_title("tasks moved so far (active + standby)")
    moved.set_ylabel("tasks moved")
    amount_axis(moved)
    count.set_title("rebalances so far")
    count.set_ylabel("rebalances")
    for axes in (moved, count):
        axes.set_xlabel(f"{unit} since the start")
        axes.set_ylim(bottom=0)
        axes.legend(fontsize=8, loc="lower right")
    return svg(figure, "movements_overlay")
