"""The report's charts of one assignment: load per client and thread, and the rack traffic matrix, drawn directly
as SVG (report.svg: no plotting library to import, which took seconds of every page), and what the other chart
modules share (colours, short amounts).

The same data gives the same bytes. Every label is text, so a browser can measure it; the client names under
the bars are written only where they have room.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from html import escape

from taskassign.report.colours import ACTIVE_COLOUR, ASSIGNOR_COLOURS, REASON_COLOURS, STANDBY_COLOUR, STATE_COLOUR
from taskassign.report.data import ClientLoad
from taskassign.report.svg import Frame, bars, legend, short_number, svg_element, text
from taskassign.report.timeline import time_axis

__all__ = ("ACTIVE_COLOUR", "ASSIGNOR_COLOURS", "REASON_COLOURS", "STANDBY_COLOUR", "STATE_COLOUR",
           "client_load_svg", "human_amount", "rack_traffic_svg", "time_axis")

MAX_LABELLED_CLIENTS = 30
#: Pixels a rotated client label needs beside the next.
_LABEL_ROOM = 13
_TOTAL_COLOUR = "#aec7e8"
WIDTH = 1000


def human_amount(value: float, unit: str = "") -> str:
    """1234567 -> "1.2M" (``unit`` "B": "1.2 MB"): axis labels that stay short at any scale."""
    return short_number(value, unit)


def _client_labels(frame: Frame, ordered: Sequence[ClientLoad], note: str) -> str:
    """Each client's short id under its bar, rotated, when there is room; else how many clients and in which
    order."""
    room = frame.width / max(1, len(ordered))
    if len(ordered) > MAX_LABELLED_CLIENTS or room < _LABEL_ROOM:
        return text(frame.left + frame.width / 2, frame.bottom + 16, f"{len(ordered)} clients, {note}", size=11,
                    anchor="middle")
    parts = []
    for i, client in enumerate(ordered):
        x, y = frame.x(i + 0.5), frame.bottom + 6
        parts.append(text(x + 3, y, client.process_id[:8], size=9, anchor="end",
                          extra=f'transform="rotate(-90 {x + 3:.1f} {y:.1f})"'))
    return "".join(parts)


def client_load_svg(clients: Sequence[ClientLoad], state_unit: str = "B") -> str:
    """Top: active and standby tasks per thread of each client (heaviest first), and how many threads carry how
    many tasks. Bottom: the same for state: each client's heaviest and lightest thread, and the threads by state
    load (``state_unit`` "B" when the state weights are bytes, "" for store counts)."""
    ordered = sorted(clients, key=lambda c: (-(c.active + c.standby) / c.threads, c.process_id))
    height, panel_h = 760, 250
    left_w, right_w = 520, 300
    parts = []
    # top left: tasks per thread of each client
    active = [c.active / c.threads for c in ordered]
    standby = [c.standby / c.threads for c in ordered]
    top = max([0.5, *(a + b for a, b in zip(active, standby, strict=True))]) * 1.25
    frame = Frame(60, 50, left_w, panel_h, 0, max(1, len(ordered)), 0, top)
    names = [c.process_id for c in ordered]
    parts += [
        text(frame.left, 20, "load per client (tasks per thread)", size=12, extra='font-weight="bold"'),
        legend(frame.left, 38, [("active / thread", ACTIVE_COLOUR, "box"),
                                ("standby / thread", STANDBY_COLOUR, "box")]),
        frame.axes(y_label="tasks per thread"),
        bars(frame, [(i + 0.1, 0.8, 0, a) for i, a in enumerate(active)], ACTIVE_COLOUR,
             tooltip=[f"{n}: {a:g} active / thread" for n, a in zip(names, active, strict=True)]),
        bars(frame, [(i + 0.1, 0.8, a, a + b) for i, (a, b) in enumerate(zip(active, standby, strict=True))],
             STANDBY_COLOUR, tooltip=[f"{n}: {b:g} standby / thread" for n, b in zip(names, standby, strict=True)]),
        _client_labels(frame, ordered, "heaviest first"),
    ]
    # top right: threads by tasks carried
    totals = [n for c in clients for n in c.thread_total]
    actives = [n for c in clients for n in c.thread_active]
    most = max(totals, default=0)
    tallest = max([1, *Counter(totals).values(), *Counter(actives).values()])
    hist = Frame(left_w + 140, 50, right_w, panel_h, -0.5, most + 0.5, 0, tallest * 1.3)
    count_a, count_t = Counter(actives), Counter(totals)
    step = 1 if most <= 20 else max(1, most // 10)
    parts += [
        text(hist.left, 20, f"load per thread ({len(totals)} threads)", size=12, extra='font-weight="bold"'),
        legend(hist.left, 38, [("active", ACTIVE_COLOUR, "box"), ("active + standby", _TOTAL_COLOUR, "box")]),
        hist.axes(x_label="tasks on the thread", y_label="threads",
                  x_ticks=[(v, str(v)) for v in range(0, most + 1, step)]),
        bars(hist, [(v - 0.4, 0.4, 0, count_a[v]) for v in sorted(count_a)], ACTIVE_COLOUR,
             tooltip=[f"{count_a[v]} threads with {v} active" for v in sorted(count_a)]),
        bars(hist, [(v, 0.4, 0, count_t[v]) for v in sorted(count_t)], _TOTAL_COLOUR,
             tooltip=[f"{count_t[v]} threads with {v} tasks" for v in sorted(count_t)]),
    ]
    parts.append(_state_per_thread(ordered, state_unit, 50 + panel_h + 110, left_w, right_w, panel_h))
    return svg_element(WIDTH, height, "".join(parts), "load per client and thread")


def _state_per_thread(ordered: Sequence[ClientLoad], unit: str, top_y: float, left_w: float, right_w: float,
                      panel_h: float) -> str:
    """Each client's heaviest thread (bar) and lightest thread (tick) of state, in the order of the task panel;
    and the spread of state over all threads."""
    heaviest = [max(c.thread_state, default=0) for c in ordered]
    lightest = [min(c.thread_state, default=0) for c in ordered]
    frame = Frame(60, top_y, left_w, panel_h, 0, max(1, len(ordered)), 0, max([1, *heaviest]) * 1.25)
    heading = "state per thread" + (" (bytes)" if unit == "B" else " (state stores: sizes unknown)")
    parts = [
        text(frame.left, top_y - 30, heading, size=12, extra='font-weight="bold"'),
        legend(frame.left, top_y - 12, [("heaviest thread", STATE_COLOUR, "box"), ("lightest thread", "#000", "box")]),
        frame.axes(y_label="state on the thread", y_format=lambda v: short_number(v, unit)),
        bars(frame, [(i + 0.1, 0.8, 0, h) for i, h in enumerate(heaviest)], STATE_COLOUR,
             tooltip=[f"{c.process_id}: heaviest thread {short_number(h, unit)}"
                      for c, h in zip(ordered, heaviest, strict=True)]),
    ]
    ticks = "".join(f"M{frame.x(i + 0.05):.1f},{frame.y(v):.1f}H{frame.x(i + 0.95):.1f}"
                    for i, v in enumerate(lightest))
    parts.append(f'<path d="{ticks}" stroke="#000" stroke-width="2.5"/>')
    parts.append(_client_labels(frame, ordered, "in the order above"))
    loads = sorted((n for c in ordered for n in c.thread_state), reverse=True)
    mean = sum(loads) / len(loads) if loads else 0
    spread = Frame(left_w + 140, top_y, right_w, panel_h, 0, max(1, len(loads)), 0, max([1, *loads]) * 1.25)
    parts += [
        text(spread.left, top_y - 30, f"state of each thread, heaviest first ({len(loads)} threads)", size=12,
             extra='font-weight="bold"'),
        spread.axes(x_label="threads", y_format=lambda v: short_number(v, unit),
                    x_ticks=[(v + 0.5, str(v + 1)) for v in _few(len(loads))]),
        bars(spread, [(i, 1.0, 0, v) for i, v in enumerate(loads)], STATE_COLOUR, min_height=1.0),
    ]
    if mean:
        parts.append(f'<path d="M{spread.left:.1f},{spread.y(mean):.1f}H{spread.right:.1f}" stroke="#000" '
                     'stroke-dasharray="5 3"/>')
        parts.append(legend(spread.left, top_y - 12, [(f"mean {short_number(mean, unit)}", "#000", "line:5 3:")]))
    return "".join(parts)


def _few(count: int) -> list[int]:
    """A handful of thread positions to label (0-based)."""
    if count <= 1:
        return [0] if count else []
    step = max(1, -(-count // 6))
    return list(range(0, count, step))


def _blue(share: float) -> str:
    """White to dark blue (``share`` in [0, 1])."""
    low, high = (0xF7, 0xFB, 0xFF), (0x08, 0x30, 0x6B)
    return "#" + "".join(f"{round(a + (b - a) * share):02x}" for a, b in zip(low, high, strict=True))


def rack_traffic_svg(cells: Sequence[tuple[str, str, float]]) -> str:
    """Partitions read per (client rack, partition rack); off-diagonal cells are cross-rack traffic."""
    rows = sorted({r for r, _, _ in cells})
    cols = sorted({c for _, c, _ in cells})
    if not cells:
        return svg_element(460, 80, text(230, 44, "no partitions read", anchor="middle", colour="#555"),
                           "rack traffic")
    grid = {(r, c): 0.0 for r in rows for c in cols}
    for r, c, value in cells:
        grid[(r, c)] += value
    peak = max(grid.values()) or 1.0
    cell_w, cell_h, left, top = 90, 34, 150, 60
    width = left + cell_w * len(cols) + 40
    height = top + cell_h * len(rows) + 60
    parts = [text(10, 18, "rack traffic (off the diagonal: cross-rack)", size=12, extra='font-weight="bold"'),
             text(left + cell_w * len(cols) / 2, 44, "rack of the partition's replicas", anchor="middle")]
    for j, col in enumerate(cols):
        parts.append(text(left + cell_w * (j + 0.5), top - 4, col[:12], size=10, anchor="middle"))
    for i, row in enumerate(rows):
        y = top + i * cell_h
        parts.append(text(left - 6, y + cell_h / 2 + 4, row[:18], size=10, anchor="end"))
        for j, col in enumerate(cols):
            value = grid[(row, col)]
            share = value / peak
            parts.append(f'<rect x="{left + j * cell_w}" y="{y}" width="{cell_w - 1}" height="{cell_h - 1}" '
                         f'fill="{_blue(share)}"><title>{escape(row)} reads from {escape(col)}: {value:g}</title>'
                         "</rect>")
            if value:
                parts.append(text(left + cell_w * (j + 0.5), y + cell_h / 2 + 4, f"{value:g}", size=10,
                                  anchor="middle", colour="#fff" if share > 0.5 else "#000"))
    parts.append(text(left - 6, top + cell_h * len(rows) + 24, "rack of the client (rows)", size=11, anchor="end"))
    return svg_element(max(width, 460), height, "".join(parts), "rack traffic")
