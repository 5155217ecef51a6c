"""A few charts drawn straight as SVG text, for pages that must render fast and show thousands of items: no
plotting library to import (matplotlib's import alone takes seconds on a busy machine), text kept as text (a
browser can measure every label), and the same data gives the same bytes.

``Frame`` maps data to pixels inside a plot area and draws the axes with a handful of "nice" ticks, so tick
labels never crowd each other whatever the data's range.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

__all__ = ("DASHES", "FONT", "MARKERS", "Frame", "bars", "histogram_svg", "legend", "line", "marker", "nice_ticks",
           "pixel_max", "short_number", "step_area", "svg_element", "text", "title")

FONT = 'font-family="system-ui,sans-serif"'


def short_number(value: float, unit: str = "") -> str:
    """1234567 -> "1.2M" (``unit`` "B": "1.2 MB"): tick labels that stay short at any scale."""
    for factor, suffix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= factor:
            number = f"{value / factor:.1f}".removesuffix(".0")
            return f"{number} {suffix}{unit}" if unit else f"{number}{suffix}"
    number = f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))
    return f"{number} {unit}".strip() if unit else number


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """About ``count`` round tick values (1, 2, 2.5 or 5 times a power of ten apart) covering [low, high]."""
    if high <= low:
        high = low + 1
    raw = (high - low) / max(1, count)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    start = math.floor(low / step) * step
    ticks = []
    value = start
    while value <= high + step * 1e-9:
        if value >= low - step * 1e-9:
            ticks.append(round(value, 10))
        value += step
    return ticks


def text(x: float, y: float, body: str, *, size: int = 11, anchor: str = "start", colour: str = "#222",
         extra: str = "") -> str:
    """A text element (``body`` escaped)."""
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{colour}"'
            f"{' ' + extra if extra else ''}>{escape(body)}</text>")


@dataclass(frozen=True)
class Frame:
    """A plot area at (left, top) of ``width`` x ``height`` pixels showing x in [x0, x1] and y in [y0, y1]."""

    left: float
    top: float
    width: float
    height: float
    x0: float
    x1: float
    y0: float
    y1: float

    def x(self, value: float) -> float:
        span = self.x1 - self.x0 or 1.0
        return self.left + (value - self.x0) / span * self.width

    def y(self, value: float) -> float:
        span = self.y1 - self.y0 or 1.0
        return self.top + self.height - (value - self.y0) / span * self.height

    @property
    def bottom(self) -> float:
        return self.top + self.height

    @property
    def right(self) -> float:
        return self.left + self.width

    def axes(self, *, x_label: str = "", y_label: str = "", x_ticks: Sequence[tuple[float, str]] = (),
             y_format: Callable[[float], str] = short_number, y_count: int = 4, grid: bool = True) -> str:
        """The box's left and bottom lines, y ticks (nice values, light grid lines), the given x ticks and the
        axis titles."""
        parts = [f'<path d="M{self.left:.1f},{self.top:.1f}V{self.bottom:.1f}H{self.right:.1f}" '
                 'stroke="#555" fill="none" stroke-width="1"/>']
        for value in nice_ticks(self.y0, self.y1, y_count):
            y = self.y(value)
            if grid and value != self.y0:
                parts.append(f'<path d="M{self.left:.1f},{y:.1f}H{self.right:.1f}" stroke="#e4e4e4"/>')
            parts.append(text(self.left - 4, y + 3.5, y_format(value), size=10, anchor="end", colour="#444"))
        for value, label in x_ticks:
            x = self.x(value)
            parts.append(f'<path d="M{x:.1f},{self.bottom:.1f}v4" stroke="#555"/>')
            parts.append(text(x, self.bottom + 15, label, size=10, anchor="middle", colour="#444"))
        if x_label:
            parts.append(text(self.left + self.width / 2, self.bottom + 30, x_label, size=11, anchor="middle"))
        if y_label:
            cx, cy = self.left - 42, self.top + self.height / 2
            parts.append(text(cx, cy, y_label, size=11, anchor="middle",
                              extra=f'transform="rotate(-90 {cx:.1f} {cy:.1f})"'))
        return "".join(parts)


def svg_element(width: float, height: float, body: str, label: str) -> str:
    """The ``<svg>`` wrapper: sized, scalable, its text in the page's font."""
    return (f'<svg width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" role="img" '
            f'aria-label="{escape(label)}" {FONT}>{body}</svg>')


def _bins(values: Sequence[float], count: int) -> tuple[list[float], list[int]]:
    """Bin edges and counts: unit-wide bins for small integer ranges, else ``count`` equal bins."""
    low, high = min(values), max(values)
    if all(float(v).is_integer() for v in values) and high - low <= count:
        edges = [low - 0.5 + i for i in range(int(high - low) + 2)]
    else:
        width = (high - low) / count or 1.0
        edges = [low + i * width for i in range(count + 1)]
    counts = [0] * (len(edges) - 1)
    span = edges[-1] - edges[0]
    for v in values:
        i = min(len(counts) - 1, int((v - edges[0]) / span * len(counts))) if span else 0
        counts[i] += 1
    return edges, counts


def _log_scale(values: Sequence[float]) -> bool:
    """Whether a metric's values are so skewed (non-negative, the largest far past the 90th percentile) that
    linear bins would put nearly every application in the first one."""
    ordered = sorted(values)
    p90 = ordered[int(len(ordered) * 0.9)]
    return ordered[0] >= 0 and ordered[-1] >= 30 and ordered[-1] > 5 * max(p90, 1.0)


def _log(value: float) -> float:
    return math.log10(1.0 + max(0.0, value))


def histogram_svg(title: str, values: Sequence[float], *, marks: Sequence[tuple[str, float]] = (),
                  colour: str = "#1f77b4", width: int = 360, height: int = 200, bins: int = 20) -> str:
    """How many applications have each value of one metric: bars over bins (logarithmic when the values are very
    skewed, as restores and moves are over a fleet), ``marks`` (p50, p90, ...) as labelled vertical lines; the
    title says how many values were binned."""
    log = bool(values) and _log_scale(values)
    heading = f"{title} ({len(values):,} apps{', log scale' if log else ''})"
    parts = [text(8, 16, heading, size=12, extra='font-weight="bold"')]
    if not values or min(values) == max(values):
        message = "no values" if not values else f"every one: {short_number(values[0])}"
        parts.append(text(width / 2, height / 2, message, anchor="middle", colour="#555"))
        return svg_element(width, height, "".join(parts), title)
    scale = _log if log else float
    edges, counts = _bins([scale(v) for v in values], bins)
    frame = Frame(52, 40, width - 70, height - 80, edges[0], edges[-1], 0, max(counts) * 1.1)
    unscale = (lambda t: 10 ** t - 1) if log else float
    for i, n in enumerate(counts):
        if n:
            x0, x1 = frame.x(edges[i]), frame.x(edges[i + 1])
            top = min(frame.y(n), frame.bottom - 1.5)  # one application still shows
            parts.append(f'<rect x="{x0 + 0.5:.1f}" y="{top:.1f}" width="{max(1.0, x1 - x0 - 1):.1f}" '
                         f'height="{frame.bottom - top:.1f}" fill="{colour}"><title>{short_number(unscale(edges[i]))}'
                         f" to {short_number(unscale(edges[i + 1]))}: {n:,}</title></rect>")
    parts.append(frame.axes(y_label="apps", y_count=3))
    ticks = [(edges[0], short_number(min(values)), "start"), (edges[-1], short_number(max(values)), "end")]
    if log:
        decades = [10 ** k for k in range(1, 13) if frame.x0 < _log(10 ** k) < frame.x1]
        room = 52 / frame.width * (frame.x1 - frame.x0)  # keep clear of the min and max labels
        ticks += [(_log(v), short_number(v), "middle") for v in decades[::max(1, -(-len(decades) // 4))]
                  if frame.x0 + room < _log(v) < frame.x1 - room]
    for value, label, anchor in ticks:
        x = frame.x(value)
        parts.append(f'<path d="M{x:.1f},{frame.bottom:.1f}v4" stroke="#555"/>')
        parts.append(text(x, frame.bottom + 15, label, size=10, anchor=anchor, colour="#444"))
    marked = sorted(marks, key=lambda m: m[1])
    for position, (_, value) in enumerate(marked):
        x = frame.x(min(max(scale(value), edges[0]), edges[-1]))
        parts.append(f'<path d="M{x:.1f},{frame.top - 4:.1f}V{frame.bottom:.1f}" stroke="#222" '
                     f'stroke-dasharray="{"4 2" if position % 2 else "1 2"}"/>')
    legend = " · ".join(f"{name} {short_number(value)} ({'dashed' if i % 2 else 'dotted'})"
                        for i, (name, value) in enumerate(marked))
    if legend:
        parts.append(text(8, 31, legend, size=10, colour="#444"))
    return svg_element(width, height, "".join(parts), title)


#: Dash patterns and marker shapes per series position: lines that coincide stay distinguishable.
DASHES = ("", "7 3", "2 3", "9 3 2 3", "4 2", "1 4")
MARKERS = ("circle", "square", "triangle", "diamond", "cross", "circle")


def title(x: float, y: float, body: str) -> str:
    """A chart's or panel's title."""
    return text(x, y, body, size=12, extra='font-weight="bold"')


def marker(shape: str, x: float, y: float, colour: str, size: float = 3.5) -> str:
    """A small filled shape centred on (x, y)."""
    if shape == "square":
        return (f'<rect x="{x - size:.1f}" y="{y - size:.1f}" width="{2 * size:.1f}" height="{2 * size:.1f}" '
                f'fill="{colour}"/>')
    if shape == "triangle":
        return (f'<path d="M{x:.1f},{y - size * 1.2:.1f}L{x + size:.1f},{y + size:.1f}L{x - size:.1f},{y + size:.1f}Z" '
                f'fill="{colour}"/>')
    if shape == "diamond":
        return (f'<path d="M{x:.1f},{y - size * 1.3:.1f}L{x + size:.1f},{y:.1f}L{x:.1f},{y + size * 1.3:.1f}'
                f'L{x - size:.1f},{y:.1f}Z" fill="{colour}"/>')
    if shape == "cross":
        return (f'<path d="M{x - size:.1f},{y - size:.1f}L{x + size:.1f},{y + size:.1f}M{x - size:.1f},{y + size:.1f}'
                f'L{x + size:.1f},{y - size:.1f}" stroke="{colour}" stroke-width="2"/>')
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{size:.1f}" fill="{colour}"/>'


def line(points: Sequence[tuple[float, float]], colour: str, *, width: float = 1.5, dash: str = "",
         step: bool = False) -> str:
    """A polyline through pixel ``points`` (``step``: horizontal then vertical, the value holding until the next
    point)."""
    if not points:
        return ""
    d = [f"M{points[0][0]:.1f},{points[0][1]:.1f}"]
    for x1, y1 in points[1:]:
        d.append(f"H{x1:.1f}V{y1:.1f}" if step else f"L{x1:.1f},{y1:.1f}")
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<path d="{"".join(d)}" fill="none" stroke="{colour}" stroke-width="{width}"'
            f' stroke-linejoin="round"{dashed}/>')


def step_area(xs: Sequence[float], lower: Sequence[float], upper: Sequence[float], colour: str, *,
              min_width: float = 0.0, opacity: float = 0.85) -> str:
    """The band between two step lines at pixel ``xs`` (each value holding until the next x). With
    ``min_width``, a stretch above ``lower`` narrower than that is widened to it, so a short restore on a long
    run shows as a visible block, not a hairline."""
    if not xs:
        return ""
    parts = []
    ends = [*xs[1:], xs[-1]]
    upper_edge = [f"{px:.1f},{y:.1f}" for x, end, y in zip(xs, ends, upper, strict=True) for px in (x, end)]
    lower_edge = [f"{px:.1f},{y:.1f}" for x, end, y in zip(xs, ends, lower, strict=True) for px in (x, end)]
    parts.append(f'<path d="M{"L".join(upper_edge)}L{"L".join(reversed(lower_edge))}Z" fill="{colour}" '
                 f'fill-opacity="{opacity}" stroke="none"/>')
    if min_width:
        start = None
        for i in range(len(xs) + 1):
            raised = i < len(xs) and upper[i] < lower[i] - 0.01
            if raised and start is None:
                start = i
            elif not raised and start is not None:
                end = xs[i] if i < len(xs) else xs[-1]
                if end - xs[start] < min_width:
                    top = min(upper[start:i])
                    bottom = max(lower[start:i])
                    parts.append(f'<rect x="{xs[start]:.1f}" y="{top:.1f}" width="{min_width:.1f}" '
                                 f'height="{max(1.5, bottom - top):.1f}" fill="{colour}" fill-opacity="{opacity}"/>')
                start = None
    return "".join(parts)


def bars(frame: Frame, items: Sequence[tuple[float, float, float, float]], colour: str, *, min_height: float = 2.0,
         tooltip: Sequence[str] = ()) -> str:
    """Rectangles (x, width, bottom value, top value) in data units; a non-empty bar is at least ``min_height``
    pixels tall and one pixel wide, so a single move on a tall axis still shows."""
    parts = []
    for i, (x, width, bottom, top) in enumerate(items):
        if top <= bottom:
            continue
        x0, x1 = frame.x(x), frame.x(x + width)
        y_bottom, y_top = frame.y(bottom), frame.y(top)
        y_top = min(y_top, y_bottom - min_height)
        tip = f"<title>{escape(tooltip[i])}</title>" if i < len(tooltip) else ""
        parts.append(f'<rect x="{x0:.1f}" y="{y_top:.1f}" width="{max(1.0, x1 - x0):.1f}" '
                     f'height="{y_bottom - y_top:.1f}" fill="{colour}">{tip}</rect>')
    return "".join(parts)


def legend(x: float, y: float, items: Sequence[tuple[str, str, str]], *, size: int = 10) -> str:
    """A one-row legend at (x, y): (label, colour, kind) with kind "box", or "line:<dash>:<marker>"."""
    parts = ['<g class="legend">']
    for label, colour, kind in items:
        if kind == "box":
            parts.append(f'<rect x="{x:.1f}" y="{y - 8:.1f}" width="12" height="9" fill="{colour}"/>')
        else:
            _, dash, shape = [*kind.split(":"), "", ""][:3]
            parts.append(line([(x, y - 4), (x + 22, y - 4)], colour, width=2, dash=dash))
            if shape:
                parts.append(marker(shape, x + 11, y - 4, colour, 3))
        offset = 16 if kind == "box" else 26
        parts.append(text(x + offset, y, label, size=size))
        x += offset + len(label) * size * 0.56 + 16
    parts.append("</g>")
    return "".join(parts)


def pixel_max(xs: Sequence[float], series: Sequence[Sequence[float]]) -> tuple[list[float], list[list[float]]]:
    """Points reduced to one per pixel column: the largest value of each series there. Thinning by picking
    every n-th point loses short spikes (a restore that lasted one sample); the maximum keeps them."""
    if not xs:
        return [], [[] for _ in series]
    out_x: list[float] = []
    out: list[list[float]] = [[] for _ in series]
    column = None
    for i, x in enumerate(xs):
        here = int(x)
        if here != column:
            column = here
            out_x.append(x)
            for s, values in zip(out, series, strict=True):
                s.append(values[i])
        else:
            for s, values in zip(out, series, strict=True):
                s[-1] = max(s[-1], values[i])
    return out_x, out
