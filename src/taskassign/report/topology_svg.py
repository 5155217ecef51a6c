"""SVG pieces the topology diagrams share: text that fits a width, boxes, colours.

Labels are set in a monospace font so their width is known without a browser (0.6 em per character in DejaVu
Sans Mono, Menlo and Consolas; ``CHAR`` keeps a margin): a label that would not fit its box is cut with an
ellipsis and its full text goes to the element's ``<title>`` (the browser's tooltip). This is what keeps
labels from overlapping at every size.
"""

from __future__ import annotations

from html import escape

__all__ = ("CHAR", "COLOURS", "FONT", "fit", "rect", "svg", "text", "text_width", "title")

FONT = "DejaVu Sans Mono, Menlo, Consolas, monospace"
#: Width of one character, in em, with a margin over the fonts' 0.6.
CHAR = 0.63
COLOURS = {
    "active": "#1f77b4", "standby": "#ff7f0e", "warmup": "#2ca02c", "move": "#d62728", "ghost": "#9a9a9a",
    "source": "#e8f1fa", "repartition": "#efe5f7", "sink": "#fdf0e0", "changelog": "#e9f5e9",
    "subtopology": "#f6f6f6", "band0": "#f4f7fb", "band1": "#fbf8f1", "edge": "#7a7a7a",
}


def text_width(value: str, size: float) -> float:
    """The width ``value`` takes at font size ``size`` (an upper bound for the monospace fonts above)."""
    return len(value) * size * CHAR


def fit(value: str, width: float, size: float) -> str:
    """``value`` cut with an ellipsis to fit ``width`` at ``size`` ("" when not even one character fits)."""
    room = int(width // (size * CHAR))
    if len(value) <= room:
        return value
    return "" if room < 2 else value[:room - 1] + "\u2026"


def title(value: str) -> str:
    return f"<title>{escape(value)}</title>"


def text(x: float, y: float, value: str, size: float, *, anchor: str = "start", fill: str = "#222",
         weight: str = "normal", cls: str = "", tip: str | None = None) -> str:
    """A label whose baseline is at ``y``; empty text is not drawn."""
    if not value:
        return ""
    attrs = f' class="{cls}"' if cls else ""
    bold = ' font-weight="bold"' if weight != "normal" else ""
    inner = escape(value) + (title(tip) if tip and tip != value else "")
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{fill}"{bold}{attrs}>'
            f"{inner}</text>")


def rect(x: float, y: float, w: float, h: float, *, fill: str = "none", stroke: str = "none", width: float = 1,
         radius: float = 0, dash: str = "", attrs: str = "") -> str:
    dashed = f' stroke-dasharray="{dash}"' if dash else ""
    rounded = f' rx="{radius}"' if radius else ""
    return (f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{fill}" stroke="{stroke}" '
            f'stroke-width="{width}"{rounded}{dashed}{attrs}/>')


def svg(svg_id: str, width: float, height: float, body: str, label: str) -> str:
    """The root element: fixed size (the page scrolls it), the font set once."""
    return (f'<svg id="{svg_id}" width="{width:.0f}" height="{height:.0f}" '
            f'viewBox="0 0 {width:.0f} {height:.0f}" font-family="{FONT}" role="img" aria-label="{escape(label)}">'
            f"{body}</svg>")
