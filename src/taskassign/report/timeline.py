"""The charts of one run over time, as inline SVG drawn directly (report.svg), readable from 2 rebalances to
thousands.

A rolling restart of a large application takes hundreds of rebalances: one bar or one dashed line per
rebalance turns into a solid smear. So past ``MAX_BARS`` rebalances the movements are summed per bin of
consecutive rebalances (with the running total beside them), and the rebalances' times and reasons get a
strip of their own under the restore chart, one row per reason, instead of lines across the data. On a long
run a restore that lasts one sample would be a hairline: samples are reduced to one per pixel by their maximum
(never thinned away), drawn as steps, and a restore narrower than a few pixels is widened to them; a bin with
a single move is still a few pixels tall.
"""

from __future__ import annotations

from collections.abc import Sequence

from taskassign.report.colours import ACTIVE_COLOUR, REASON_COLOURS, STANDBY_COLOUR
from taskassign.report.data import RebalanceRow, SampleRow
from taskassign.report.svg import (
    Frame,
    bars,
    legend,
    line,
    nice_ticks,
    pixel_max,
    short_number,
    step_area,
    svg_element,
    text,
    title,
)

__all__ = ("MAX_BARS", "MAX_POINTS", "MIN_RESTORE_PX", "WIDTH", "first_reason", "movements_svg",
           "restore_timeline_svg", "thin", "time_axis")

#: Above this many rebalances, movements are drawn per bin of rebalances.
MAX_BARS = 60
#: Samples drawn at most per line (evenly thinned, the first and last kept) where a chart thins by picking.
MAX_POINTS = 1500
#: A restore is drawn at least this wide (pixels), however short it was against the run.
MIN_RESTORE_PX = 4.0
WIDTH = 1000

#: (largest span in ms, divisor, unit) for the time axis: seconds, minutes, hours, days.
_TIME_UNITS = ((180_000, 1_000, "seconds"), (10_800_000, 60_000, "minutes"), (259_200_000, 3_600_000, "hours"),
               (None, 86_400_000, "days"))


def time_axis(span_ms: int) -> tuple[float, str]:
    """(divisor, unit name) that keep a time axis of ``span_ms`` in readable numbers."""
    for limit, divisor, unit in _TIME_UNITS:
        if limit is None or span_ms <= limit:
            return float(divisor), unit
    raise AssertionError("unreachable")


def first_reason(row: RebalanceRow) -> str:
    """The reason a rebalance is coloured by: its first one."""
    return row.reasons[0] if row.reasons else "initial"


def thin(samples: Sequence[SampleRow], limit: int = MAX_POINTS) -> list[SampleRow]:
    """At most ``limit`` samples, evenly spaced, the first and the last kept."""
    if len(samples) <= limit:
        return list(samples)
    step = (len(samples) - 1) / (limit - 1)
    return [samples[round(i * step)] for i in range(limit)]


def x_ticks(frame: Frame, *, integer: bool = False, count: int = 8) -> list[tuple[float, str]]:
    """Nice ticks along ``frame``'s x range."""
    ticks = nice_ticks(frame.x0, frame.x1, count)
    if integer:
        ticks = [t for t in ticks if float(t).is_integer()]
    return [(t, short_number(t)) for t in ticks if frame.x0 <= t <= frame.x1]


def right_axis(frame: Frame, top: float, label: str) -> str:
    """Ticks and a title on the right edge for a second series scaled to [0, ``top``]."""
    parts = [f'<path d="M{frame.right:.1f},{frame.top:.1f}V{frame.bottom:.1f}" stroke="#555"/>']
    for value in nice_ticks(0, top, 4):
        y = frame.bottom - value / (top or 1) * frame.height
        parts.append(text(frame.right + 5, y + 3.5, short_number(value), size=10, colour="#444"))
    cx, cy = frame.right + 48, frame.top + frame.height / 2
    parts.append(text(cx, cy, label, size=11, anchor="middle", extra=f'transform="rotate(90 {cx:.1f} {cy:.1f})"'))
    return "".join(parts)


def movements_svg(rows: Sequence[RebalanceRow]) -> str:
    """Active and standby moves per rebalance (summed per bin past ``MAX_BARS``), and their running total."""
    active = [int(r.metrics.get("active_moves", 0)) for r in rows]
    standby = [int(r.metrics.get("standby_moves", 0)) for r in rows]
    size = max(1, -(-len(rows) // MAX_BARS))
    starts = list(range(0, len(rows), size))
    xs = [rows[i].index for i in starts]
    binned_active = [sum(active[i:i + size]) for i in starts]
    binned_standby = [sum(standby[i:i + size]) for i in starts]
    tallest = max([1, *(a + b for a, b in zip(binned_active, binned_standby, strict=True))])
    first, last = (rows[0].index, rows[-1].index + size) if rows else (0, 1)
    height = 380
    frame = Frame(70, 50, WIDTH - 150, height - 110, first, last, 0, tallest * 1.15)
    per = "per rebalance" if size == 1 else f"per {size} rebalances"
    labels = [f"rebalances {x}-{x + size - 1}" if size > 1 else f"rebalance {x}" for x in xs]
    parts = [
        title(10, 18, f"movements {per}, and in all"),
        frame.axes(x_label="rebalance", y_label=f"tasks moved {per}",
                   x_ticks=x_ticks(frame, integer=True)),
        bars(frame, [(x, 0.8 * size, 0, a) for x, a in zip(xs, binned_active, strict=True)], ACTIVE_COLOUR,
             tooltip=[f"{lab}: {a:,} active moves" for lab, a in zip(labels, binned_active, strict=True)]),
        bars(frame, [(x, 0.8 * size, a, a + b) for x, a, b in zip(xs, binned_active, binned_standby, strict=True)],
             STANDBY_COLOUR, tooltip=[f"{lab}: {b:,} standby moves" for lab, b in
                                      zip(labels, binned_standby, strict=True)]),
    ]
    total, cumulative = 0, []
    for a, b in zip(active, standby, strict=True):
        total += a + b
        cumulative.append(total)
    top = max(1, total) * 1.1
    points = [(frame.x(r.index), frame.bottom - c / top * frame.height) for r, c in zip(rows, cumulative, strict=True)]
    if points:
        points.append((frame.x(last), points[-1][1]))
    parts.append(line(points, "#111", width=1.4, step=True))
    parts.append(right_axis(frame, top, "tasks moved in all"))
    parts.append(legend(frame.left + 6, 38, [("active moves", ACTIVE_COLOUR, "box"),
                                              ("standby moves", STANDBY_COLOUR, "box"),
                                              ("moved in all (right axis)", "#111", "line::")]))
    return svg_element(WIDTH, height, "".join(parts), f"movements {per}")


def restore_timeline_svg(samples: Sequence[SampleRow], rows: Sequence[RebalanceRow]) -> str:
    """Records left to restore (actives and standbys stacked, as steps) and tasks not running over time; below,
    a strip with a tick per rebalance in the row of its reason."""
    span = max([1, *(s.offset_ms for s in samples), *(r.offset_ms for r in rows)])
    divisor, unit = time_axis(span)
    reasons = [r for r in REASON_COLOURS if any(first_reason(row) == r for row in rows)]
    row_height = 16
    main_height = 300
    height = 50 + main_height + 40 + len(reasons) * row_height + 50
    frame = Frame(90, 50, WIDTH - 170, main_height, 0, span / divisor, 0, 1)
    pixel_xs = [frame.x(s.offset_ms / divisor) for s in samples]
    xs, (active, stacked, idle) = pixel_max(pixel_xs, [
        [float(s.active_records_left) for s in samples],
        [float(s.active_records_left + s.standby_records_left) for s in samples],
        [float(s.tasks_not_running) for s in samples]])
    top = max([1.0, *stacked]) * 1.3  # room for the legend
    frame = Frame(frame.left, frame.top, frame.width, frame.height, frame.x0, frame.x1, 0, top)
    baseline = [frame.bottom] * len(xs)
    active_y = [frame.y(v) for v in active]
    stacked_y = [frame.y(v) for v in stacked]
    parts = [
        title(10, 18, "records left to restore"),
        frame.axes(y_label="records", x_ticks=x_ticks(frame)),
        step_area(xs, baseline, active_y, ACTIVE_COLOUR, min_width=MIN_RESTORE_PX),
        step_area(xs, active_y, stacked_y, STANDBY_COLOUR, min_width=MIN_RESTORE_PX),
    ]
    idle_top = max([1.0, *idle]) * 1.3
    parts.append(line([(x, frame.bottom - v / idle_top * frame.height) for x, v in zip(xs, idle, strict=True)],
                      "#111", width=1.3, step=True))
    parts.append(right_axis(frame, idle_top, "tasks not running"))
    parts.append(legend(frame.left + 6, 38, [("actives restoring", ACTIVE_COLOUR, "box"),
                                              ("standbys / warm-ups restoring", STANDBY_COLOUR, "box"),
                                              ("tasks not running (right axis)", "#111", "line::")]))
    strip_top = frame.bottom + 40
    strip = Frame(frame.left, strip_top, frame.width, max(1, len(reasons)) * row_height, frame.x0, frame.x1, 0, 1)
    parts.append(text(strip.left, strip_top - 8, f"{len(rows)} rebalances, by reason", size=11))
    parts.append(f'<rect x="{strip.left:.1f}" y="{strip.top:.1f}" width="{strip.width:.1f}" '
                 f'height="{strip.height:.1f}" fill="none" stroke="#bbb"/>')
    for position, reason in enumerate(reasons):
        y = strip.top + position * row_height
        parts.append(text(strip.left - 6, y + row_height / 2 + 4, reason, size=10, anchor="end"))
        ticks = "".join(f"M{strip.x(r.offset_ms / divisor):.1f},{y + 2:.1f}v{row_height - 4}"
                        for r in rows if first_reason(r) == reason)
        parts.append(f'<path d="{ticks}" stroke="{REASON_COLOURS[reason]}" stroke-width="2"/>')
    for value, label in x_ticks(strip):
        parts.append(text(strip.x(value), strip.bottom + 15, label, size=10, anchor="middle", colour="#444"))
    parts.append(text(strip.left + strip.width / 2, strip.bottom + 32, f"{unit} since the start", anchor="middle"))
    return svg_element(WIDTH, height, "".join(parts), "records left to restore over time")
