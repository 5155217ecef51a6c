"""The report's plots (matplotlib's object API on the Agg canvas: no pyplot, no global state), and what the
other plot modules share: colours, the PNG and SVG writers, the axis units.

Each function draws one figure from ReportData pieces. PNGs and SVGs carry no timestamp or version metadata
and SVG ids come from a fixed salt, so the same data gives the same bytes. The charts over time
(``timeline``, ``overlay``) are SVG with their text as text, so the page stays sharp and a browser can
measure every label.
"""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Sequence

from matplotlib import rc_context
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator

from taskassign.report.colours import ACTIVE_COLOUR, ASSIGNOR_COLOURS, REASON_COLOURS, STANDBY_COLOUR, STATE_COLOUR
from taskassign.report.data import ClientLoad

__all__ = ("ACTIVE_COLOUR", "ASSIGNOR_COLOURS", "REASON_COLOURS", "STANDBY_COLOUR", "STATE_COLOUR", "amount_axis",
           "client_load_png", "human_amount", "rack_traffic_png", "svg", "time_axis")

MAX_LABELLED_CLIENTS = 30
DPI = 100


def _png(figure: Figure) -> bytes:
    FigureCanvasAgg(figure)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=DPI, metadata={"Software": None})
    return buffer.getvalue()


_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.DOTALL)
_NAMESPACES = re.compile(r'\s+xmlns(?::\w+)?="[^"]*"')


def svg(figure: Figure, salt: str) -> str:
    """The figure as an ``<svg>`` element to inline in HTML: text kept as text, ids salted with ``salt`` (unique
    per figure of a page), no date."""
    FigureCanvasAgg(figure)
    buffer = io.StringIO()
    with rc_context({"svg.fonttype": "none", "svg.hashsalt": salt}):
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    text = _METADATA.sub("", text[text.index("<svg"):])
    return _NAMESPACES.sub("", text)  # HTML's parser knows SVG and xlink: no namespace URI on the page


#: (largest span in ms, divisor, unit) for the time axis: seconds, minutes, hours, days.
_TIME_UNITS = ((180_000, 1_000, "seconds"), (10_800_000, 60_000, "minutes"), (259_200_000, 3_600_000, "hours"),
               (None, 86_400_000, "days"))


def time_axis(span_ms: int) -> tuple[float, str]:
    """(divisor, unit name) that keep a time axis of ``span_ms`` in readable numbers."""
    for limit, divisor, unit in _TIME_UNITS:
        if limit is None or span_ms <= limit:
            return float(divisor), unit
    raise AssertionError("unreachable")


def human_amount(value: float, unit: str = "") -> str:
    """1234567 -> "1.2M" (``unit`` "B": "1.2 MB"): axis labels that stay short at any scale."""
    for factor, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            number = f"{value / factor:.1f}".removesuffix(".0")
            return f"{number} {suffix}{unit}" if unit else f"{number}{suffix}"
    return f"{value:g} {unit}".strip() if unit else f"{value:g}"


def amount_axis(axes: Axes, unit: str = "") -> None:
    """Short y tick labels (k, M, G) on ``axes``."""
    axes.yaxis.set_major_formatter(FuncFormatter(lambda v, _: human_amount(v, unit)))


def client_load_png(clients: Sequence[ClientLoad], state_unit: str = "B") -> bytes:
    """Top: active and standby tasks per thread of each client (heaviest first), and how many threads carry how
    many tasks. Bottom: the same for state: each client's heaviest and lightest thread, and the threads by state
    load (``state_unit`` "B" when the state weights are bytes, "" for store counts)."""
    figure = Figure(figsize=(11, 7.6), layout="constrained")
    (left, right), (state_left, state_right) = figure.subplots(2, 2, width_ratios=(3, 2))
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
    _state_per_thread(state_left, state_right, ordered, state_unit)
    return _png(figure)


def _state_per_thread(left: Axes, right: Axes, ordered: Sequence[ClientLoad], unit: str) -> None:
    """Each client's heaviest thread (bar) and lightest thread (tick) of state, in the order of the task panel;
    and the spread of state over all threads."""
    xs = list(range(len(ordered)))
    heaviest = [max(c.thread_state, default=0) for c in ordered]
    lightest = [min(c.thread_state, default=0) for c in ordered]
    left.bar(xs, heaviest, color=STATE_COLOUR, label="heaviest thread")
    left.scatter(xs, lightest, marker="_", s=120, color="black", label="lightest thread", zorder=3)
    left.set_title("state per thread" + (" (bytes)" if unit == "B" else " (state stores: sizes unknown)"))
    left.set_ylabel("state on the thread")
    amount_axis(left, unit)
    if len(ordered) <= MAX_LABELLED_CLIENTS:
        left.set_xticks(xs, [c.process_id[:8] for c in ordered], rotation=60, fontsize=7)
    else:
        left.set_xticks([])
        left.set_xlabel(f"{len(ordered)} clients, in the order above")
    left.set_ylim(0, max([1, *heaviest]) * 1.25)
    left.legend(loc="upper right", fontsize=8)
    loads = sorted((n for c in ordered for n in c.thread_state), reverse=True)
    mean = sum(loads) / len(loads) if loads else 0
    right.bar(range(len(loads)), loads, width=1.0, color=STATE_COLOUR)
    if mean:
        right.axhline(mean, color="black", linewidth=0.8, linestyle="--", label=f"mean {human_amount(mean, unit)}")
        right.legend(fontsize=8, loc="upper right")
    right.set_xlim(-0.5, max(1, len(loads)) - 0.5)
    right.xaxis.set_major_locator(MaxNLocator(integer=True))
    right.set_title(f"state of each thread, heaviest first ({len(loads)} threads)")
    right.set_xlabel("threads")
    amount_axis(right, unit)
    right.set_ylim(0, max([1, *loads]) * 1.25)


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
