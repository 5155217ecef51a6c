"""One self-contained HTML page: the plots inlined as base64 PNGs, the tables, no network reference.

The page has no script and no external stylesheet, font or image, so it opens offline, from a mail
attachment or a CI artifact alike.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from html import escape

from taskassign.analysis.metrics import metric_fields
from taskassign.report.data import RebalanceRow, ReportData

__all__ = ("render_html",)

_STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2em auto; max-width: 1150px;
       color: #222; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.2em; margin-top: 2em; }
.meta { color: #555; } .summary span { display: inline-block; margin-right: 1.5em; }
figure { margin: 1em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #ddd; }
figcaption { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; font-size: 0.85em; } th, td { padding: 0.2em 0.6em; text-align: right; }
th { background: #f0f0f0; position: sticky; top: 0; } td.text, th.text { text-align: left; }
tr:nth-child(even) td { background: #fafafa; } td.section { font-weight: bold; text-align: left; background: #eee; }
.ok { color: #2a7d2a; } .bad { color: #b22222; } .scroll { max-height: 32em; overflow: auto; }
"""

#: Figures in page order: key in the images mapping, title, caption.
FIGURES = (
    ("client_load", "Load per client and thread",
     "Final assignment: active and standby tasks per thread of each client, and the spread of tasks over threads."),
    ("movements", "Movements per rebalance",
     "Tasks whose active, or a standby copy, landed on a client that did not hold it before the rebalance."),
    ("restore_timeline", "Records left to restore over time",
     "Changelog records the clients still had to restore; dashed lines are rebalances, the black line counts "
     "tasks that no client was processing."),
    ("rack_traffic", "Rack traffic matrix",
     "Final assignment: partitions read per client rack and replica rack (actives read their source partitions, "
     "standbys their changelogs)."),
)
_SECTION_STARTS = {"tasks": "size", "active_load_max": "balance (per thread)",
                   "state_load_max": "state-weighted load", "active_moves": "movement",
                   "standby_shortfall_tasks": "standbys", "cross_rack_active_partitions": "racks and tags",
                   "thread_state_imbalance": "state per thread"}


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".") if value != int(value) else f"{value:,.1f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return escape(str(value))


def _duration(ms: int) -> str:
    seconds = ms // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, seconds = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}"


def _summary(data: ReportData) -> str:
    s = data.summary
    converged = s.get("converged")
    state = ('<span class="ok">converged</span>' if converged else '<span class="bad">did not converge</span>')
    settled = s.get("settled_at_ms")
    by_reason = s.get("by_reason") or {}
    parts = [
        f"<span>{state}{'' if settled is None else ' at +' + _duration(int(settled))}</span>",
        f"<span>{_fmt(s.get('rebalances', len(data.rebalances)))} rebalances</span>",
        f"<span>{_fmt(s.get('probing_rebalances', 0))} probing</span>",
        "<span>" + ", ".join(f"{escape(str(k))}: {_fmt(v)}" for k, v in by_reason.items()) + "</span>",
    ]
    html = '<p class="summary">' + "".join(parts) + "</p>"
    if s.get("stopped_reason"):
        html += f'<p class="bad">stopped: {escape(str(s["stopped_reason"]))}</p>'
    for note in s.get("notes") or ():
        html += f'<p class="meta">note: {escape(str(note))}</p>'
    return html


def _metrics_table(metrics: Mapping[str, int | float]) -> str:
    if not metrics:
        return "<p>No assignment was computed.</p>"
    rows = []
    for f in metric_fields():
        if f.name in _SECTION_STARTS:
            rows.append(f'<tr><td class="section" colspan="3">{_SECTION_STARTS[f.name]}</td></tr>')
        rows.append(f'<tr><td class="text"><code>{f.name}</code></td><td>{_fmt(metrics.get(f.name, ""))}</td>'
                    f'<td class="text">{escape(f.doc)}</td></tr>')
    return ('<table><thead><tr><th class="text">metric</th><th>value</th><th class="text">definition</th></tr>'
            "</thead><tbody>" + "".join(rows) + "</tbody></table>")


def _rebalance_table(rows: Sequence[RebalanceRow]) -> str:
    head = ("#", "time", "reasons", "clients", "error", "probing", "active moves", "standby moves",
            "to restore", "left to restore", "not running", "active skew")
    body = []
    for r in rows:
        m = r.metrics
        error = f'<span class="{"ok" if r.error == "NONE" else "bad"}">{escape(r.error)}</span>'
        cells = (str(r.index), _duration(r.offset_ms), escape(", ".join(r.reasons)), _fmt(m.get("clients", "")),
                 error, "yes" if r.probing_rebalance_needed else "no", _fmt(m.get("active_moves", "")),
                 _fmt(m.get("standby_moves", "")), _fmt(m.get("records_to_restore", "")),
                 _fmt(r.active_records_left + r.standby_records_left), _fmt(r.tasks_not_running),
                 _fmt(m.get("active_load_skew", "")))
        body.append("<tr>" + "".join(f'<td{" class=text" if i == 2 else ""}>{c}</td>' for i, c in enumerate(cells))
                    + "</tr>")
    header = "".join(f'<th{" class=text" if i == 2 else ""}>{h}</th>' for i, h in enumerate(head))
    return f'<div class="scroll"><table><thead><tr>{header}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def render_html(data: ReportData, images: Mapping[str, bytes]) -> str:
    """The page: header and summary, the figures present in ``images``, the final metrics, every rebalance."""
    figures = []
    for key, title, caption in FIGURES:
        png = images.get(key)
        if png is None:
            continue
        encoded = base64.b64encode(png).decode("ascii")
        figures.append(f'<h2>{escape(title)}</h2><figure><img id="plot-{key}" alt="{escape(title)}" '
                       f'src="data:image/png;base64,{encoded}"><figcaption>{escape(caption)}</figcaption></figure>')
    title = f"taskassign simulation: {data.scenario}"
    meta = (f"assignor <b>{escape(data.assignor)}</b> · seed {data.seed} · {escape(data.protocol)} protocol · "
            f"{_duration(data.end_ms - data.start_ms)} simulated · from {escape(data.source)}")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head><body>"
        f"<h1>{escape(title)}</h1><p class=\"meta\">{meta}</p>{_summary(data)}"
        + "".join(figures)
        + "<h2>Metrics of the final assignment</h2>" + _metrics_table(data.final_metrics)
        + "<h2>Rebalances</h2>" + _rebalance_table(data.rebalances)
        + "</body></html>\n"
    )
