"""What the report's pages share: the style, number and time formats, figures, legends, the totals box and the
metrics table (metrics as rows, one column per assignment, the better value of a row marked).

Pages are self-contained: no script and no external stylesheet, font or image, so they open offline, from a
mail attachment or a CI artifact alike.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from html import escape

from taskassign.analysis.compare import TOTAL_FIELDS, RunTotals
from taskassign.analysis.metrics import SECTION_STARTS, metric_fields

__all__ = ("STYLE", "colour_legend", "duration", "figure", "fmt", "metrics_table", "page", "total_value", "totals_box",
           "totals_table")

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1150px;
       color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 2em; }
.meta { color: #555; } .summary span { display: inline-block; margin-right: 1.5em; }
figure { margin: 1em 0; } figure img, figure svg { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; font-size: 0.85em; } th, td { padding: 0.2em 0.6em; text-align: right; }
th { background: #f0f0f0; position: sticky; top: 0; } td.text, th.text { text-align: left; }
tr:nth-child(even) td { background: #fafafa; } td.section { font-weight: bold; text-align: left; background: #eee; }
.ok { color: #2a7d2a; } .bad { color: #b22222; } .scroll { max-height: 32em; overflow: auto; }
td { white-space: nowrap; } td.text { white-space: normal; }
td.best { color: #2a7d2a; font-weight: bold; } td.best::after { content: " \\2713"; }
.totals { display: flex; flex-wrap: wrap; gap: 0.6em; margin: 1em 0; }
.totals div { border: 1px solid #ccc; border-radius: 4px; padding: 0.4em 0.8em; background: #f8f8f8; }
.totals b { display: block; font-size: 1.3em; } .totals span { color: #555; font-size: 0.85em; }
.legend { display: flex; flex-wrap: wrap; gap: 1.2em; font-size: 0.9em; margin: 0.6em 0; }
.legend i { display: inline-block; width: 1.1em; height: 0.8em; margin-right: 0.35em; vertical-align: middle; }
"""


def fmt(value: object) -> str:
    """A number with thousands separators (floats to 3 decimals), anything else escaped."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".") if value != int(value) else f"{value:,.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return escape(str(value))


def duration(ms: int) -> str:
    """``h:mm:ss``."""
    seconds = ms // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}"


def total_value(key: str, value: int | bool | None) -> str:
    """A run total as the page shows it (``settled_at_ms`` as a duration, or "never")."""
    if key == "settled_at_ms":
        return "never" if value is None else duration(value)
    return fmt(value)


def page(title: str, meta: str, body: str) -> str:
    """The whole document around ``body`` (``meta`` is HTML already)."""
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta name=\"generator\" content=\"taskassign\">"  # how formats.output_paths knows it is ours
        f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1><p class=\"meta\">{meta}</p>{body}</body></html>\n"
    )


def figure(key: str, title: str, caption: str, image: bytes | str) -> str:
    """A titled figure: PNG bytes as an inlined image, or an ``<svg>`` element as it is."""
    if isinstance(image, bytes):
        encoded = base64.b64encode(image).decode("ascii")
        body = f'<img id="plot-{key}" alt="{escape(title)}" src="data:image/png;base64,{encoded}">'
    else:
        body = f'<div id="plot-{key}" class="svg-plot" role="img" aria-label="{escape(title)}">{image}</div>'
    return f"<h2>{escape(title)}</h2><figure>{body}<figcaption>{escape(caption)}</figcaption></figure>"


def colour_legend(legend_id: str, title: str, colours: Sequence[tuple[str, str]]) -> str:
    """A row of colour swatches with their names (the charts' colours of reasons or assignors)."""
    items = "".join(f'<span class="legend-item"><i style="background:{colour}"></i>{escape(name)}</span>'
                    for name, colour in colours)
    return f'<div class="legend" id="{legend_id}"><b>{escape(title)}</b>{items}</div>'


def totals_box(totals: RunTotals) -> str:
    """One run's totals as a row of boxes."""
    cells = "".join(f'<div><b>{total_value(f.name, getattr(totals, f.name))}</b><span>{f.label}</span></div>'
                    for f in TOTAL_FIELDS)
    return f'<div class="totals" id="totals">{cells}</div>'


def _cell(text: str, best: bool) -> str:
    return f'<td class="best">{text}</td>' if best else f"<td>{text}</td>"


def totals_table(columns: Sequence[str], totals: Mapping[str, RunTotals], best: Mapping[str, Sequence[str]]) -> str:
    """Totals as rows, one column per assignor, the better value of each row marked."""
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    rows = []
    for f in TOTAL_FIELDS:
        cells = "".join(_cell(total_value(f.name, getattr(totals[c], f.name)), c in best.get(f.name, ()))
                        for c in columns)
        rows.append(f'<tr><td class="text">{f.label}</td>{cells}<td class="text">{escape(f.doc)}</td></tr>')
    return (f'<table id="totals"><thead><tr><th class="text">total</th>{head}<th class="text">definition</th></tr>'
            f"</thead><tbody>{''.join(rows)}</tbody></table>")


def metrics_table(columns: Sequence[tuple[str, Mapping[str, int | float]]],
                  best: Mapping[str, Sequence[str]] | None = None) -> str:
    """Every metric as a row, one column per (heading, metrics); a value whose heading ``best`` names for the
    metric is marked."""
    if not columns or not any(values for _, values in columns):
        return "<p>No assignment was computed.</p>"
    width = len(columns) + 2
    rows = []
    for f in metric_fields():
        if f.name in SECTION_STARTS:
            rows.append(f'<tr><td class="section" colspan="{width}">{SECTION_STARTS[f.name]}</td></tr>')
        marked = best.get(f.name, ()) if best else ()
        cells = "".join(_cell(fmt(values.get(f.name, "")), heading in marked) for heading, values in columns)
        rows.append(f'<tr><td class="text"><code>{f.name}</code></td>{cells}<td class="text">{escape(f.doc)}</td></tr>')
    head = "".join(f"<th>{escape(heading)}</th>" for heading, _ in columns)
    return (f'<table class="metrics"><thead><tr><th class="text">metric</th>{head}<th class="text">definition</th>'
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")
