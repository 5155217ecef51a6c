"""The charts of ``taskassign compare --out``: several assignors on one input, one line each, on shared axes, drawn
directly as SVG (report.svg).

Each assignor keeps its colour on every chart (``ASSIGNOR_COLOURS``, in the order named; the page's legend
shows them), and its own dash pattern and marker: two assignors that tie draw the same line, so the lines are
also shifted a pixel or two apart, and the markers (at spaced points, not one per sample) show which is which.
"""

from __future__ import annotations

from collections.abc import Sequence

from taskassign.report.colours import ASSIGNOR_COLOURS
from taskassign.report.data import ReportData
from taskassign.report.svg import DASHES, MARKERS, Frame, legend, line, marker, pixel_max, svg_element, text, title
from taskassign.report.timeline import WIDTH, time_axis, x_ticks

__all__ = ("assignor_colour", "movements_overlay_svg", "restore_overlay_svg", "thread_state_overlay_svg")

#: Markers per line, spread along it.
MARKS_PER_LINE = 8
#: Pixels between the lines of neighbouring assignors, so equal values stay visible as separate lines.
OFFSET_PX = 1.6


def assignor_colour(position: int) -> str:
    return ASSIGNOR_COLOURS[position % len(ASSIGNOR_COLOURS)]


def _style(position: int) -> tuple[str, str, str]:
    return assignor_colour(position), DASHES[position % len(DASHES)], MARKERS[position % len(MARKERS)]


def _series(points: Sequence[tuple[float, float]], position: int, count: int, *, step: bool) -> str:
    """One assignor's line: its colour, dash and markers, shifted by its offset."""
    colour, dash, shape = _style(position)
    shift = (position - (count - 1) / 2) * OFFSET_PX
    moved = [(x, y + shift) for x, y in points]
    parts = [line(moved, colour, width=1.8, dash=dash, step=step)]
    if moved:
        every = max(1, len(moved) // MARKS_PER_LINE)
        start = (position * every) // max(1, count)  # neighbours' markers do not sit on each other
        parts += [marker(shape, x, y, colour) for x, y in moved[start::every]]
    return "".join(parts)


def _legend(runs: Sequence[ReportData], x: float, y: float) -> str:
    return legend(x, y, [(run.assignor, *_style(i)[:1], f"line:{_style(i)[1]}:{_style(i)[2]}")
                         for i, run in enumerate(runs)])


def thread_state_overlay_svg(runs: Sequence[ReportData]) -> str:
    """Left: every thread's state load over the mean per thread, heaviest first (1.0 is even), per assignor.
    Right: the same for tasks (active + standby) per thread."""
    height, panel = 400, (WIDTH - 120) / 2
    parts = [_legend(runs, 70, 38)]
    for side, (what, attribute) in enumerate((("state", "thread_state"), ("tasks (active + standby)", "thread_total"))):
        series = []
        for run in runs:
            loads = sorted((n for c in run.clients for n in getattr(c, attribute)), reverse=True)
            mean = sum(loads) / len(loads) if loads else 0
            series.append([n / mean for n in loads] if mean else [])
        threads = max([1, *(len(s) for s in series)])
        top = max([1.5, *(v for s in series for v in s)]) * 1.1
        frame = Frame(70 + side * (panel + 50), 60, panel - 30, height - 120, 0.5, threads + 0.5, 0, top)
        parts.append(text(frame.left, 54, f"{what} per thread / mean", size=12, extra='font-weight="bold"'))
        parts.append(frame.axes(x_label="threads, heaviest first", y_label="load / mean load per thread",
                                x_ticks=x_ticks(frame, integer=True, count=6)))
        parts.append(f'<path d="M{frame.left:.1f},{frame.y(1.0):.1f}H{frame.right:.1f}" stroke="#000" '
                     'stroke-dasharray="5 3" stroke-width="0.8"/>')
        for position, values in enumerate(series):
            points = [(frame.x(i + 1), frame.y(v)) for i, v in enumerate(values)]
            parts.append(_series(points, position, len(runs), step=False))
    parts.insert(0, title(10, 18, "load per thread of each assignor's last assignment"))
    return svg_element(WIDTH, height, "".join(parts), "load per thread")


def _span(runs: Sequence[ReportData]) -> tuple[int, float, str]:
    span = max([1, *(s.offset_ms for run in runs for s in run.samples),
                *(r.offset_ms for run in runs for r in run.rebalances)])
    return (span, *time_axis(span))


def restore_overlay_svg(runs: Sequence[ReportData]) -> str:
    """Records left to restore (actives and standbys) and tasks not running over time, per assignor."""
    span, divisor, unit = _span(runs)
    height = 520
    records = Frame(90, 50, WIDTH - 130, 250, 0, span / divisor, 0, 1)
    idle = Frame(90, 345, WIDTH - 130, 110, 0, span / divisor, 0, 1)
    reduced = []
    for run in runs:
        xs = [records.x(s.offset_ms / divisor) for s in run.samples]
        reduced.append(pixel_max(xs, [[float(s.active_records_left + s.standby_records_left) for s in run.samples],
                                      [float(s.tasks_not_running) for s in run.samples]]))
    top_records = max([1.0, *(v for _, (r, _) in reduced for v in r)]) * 1.15
    top_idle = max([1.0, *(v for _, (_, i) in reduced for v in i)]) * 1.15
    records = Frame(records.left, records.top, records.width, records.height, records.x0, records.x1, 0, top_records)
    idle = Frame(idle.left, idle.top, idle.width, idle.height, idle.x0, idle.x1, 0, top_idle)
    parts = [title(10, 18, "records left to restore"), _legend(runs, 300, 18),
             records.axes(y_label="records", x_ticks=x_ticks(records)),
             text(idle.left, idle.top - 8, "tasks not running", size=11, extra='font-weight="bold"'),
             idle.axes(y_label="tasks", x_label=f"{unit} since the start", x_ticks=x_ticks(idle), y_count=3)]
    for position, (xs, (left, not_running)) in enumerate(reduced):
        parts.append(_series([(x, records.y(v)) for x, v in zip(xs, left, strict=True)], position, len(runs),
                             step=True))
        parts.append(_series([(x, idle.y(v)) for x, v in zip(xs, not_running, strict=True)], position, len(runs),
                             step=True))
    return svg_element(WIDTH, height, "".join(parts), "records left to restore over time")


def movements_overlay_svg(runs: Sequence[ReportData]) -> str:
    """Tasks moved (active + standby) and rebalances so far, over time, per assignor."""
    span, divisor, unit = _span(runs)
    height, panel = 400, (WIDTH - 120) / 2
    cumulative = []
    for run in runs:
        total, moved = 0, []
        for r in run.rebalances:
            total += int(r.metrics.get("active_moves", 0)) + int(r.metrics.get("standby_moves", 0))
            moved.append((r.offset_ms / divisor, total))
        cumulative.append(moved)
    parts = [title(10, 18, "moves and rebalances over time"), _legend(runs, 70, 38)]
    panels = (("tasks moved so far (active + standby)", "tasks moved", [[v for _, v in m] for m in cumulative]),
              ("rebalances so far", "rebalances", [list(range(1, len(m) + 1)) for m in cumulative]))
    for side, (heading, label, values) in enumerate(panels):
        top = max([1, *(v for s in values for v in s)]) * 1.1
        frame = Frame(80 + side * (panel + 50), 60, panel - 40, height - 120, 0, span / divisor, 0, top)
        parts.append(text(frame.left, 54, heading, size=12, extra='font-weight="bold"'))
        parts.append(frame.axes(x_label=f"{unit} since the start", y_label=label, x_ticks=x_ticks(frame, count=5)))
        for position, (moved, series) in enumerate(zip(cumulative, values, strict=True)):
            points = [(frame.x(t), frame.y(v)) for (t, _), v in zip(moved, series, strict=True)]
            if points:
                points.append((frame.right, points[-1][1]))
            parts.append(_series(points, position, len(runs), step=True))
    return svg_element(WIDTH, height, "".join(parts), "moves and rebalances over time")
