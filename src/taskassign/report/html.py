"""The page of one run (``taskassign report``): header, run totals, the reason colours, the figures, the
first against the last assignment's metrics, every rebalance. Shared pieces are in ``page``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from taskassign.analysis.compare import best_values
from taskassign.report.data import RebalanceRow, ReportData
from taskassign.report.page import colour_legend, duration, figure, fmt, metrics_table, page, totals_box
from taskassign.report.plots import REASON_COLOURS
from taskassign.report.timeline import first_reason

__all__ = ("FIGURES", "reason_legend", "render_html")

#: Figures in page order: key in the images mapping, title, caption.
FIGURES = (
    ("client_load", "Load per client and thread",
     "Last assignment: active and standby tasks per thread of each client and the spread of tasks over threads "
     "(top); the state each thread holds, each client's heaviest and lightest thread and all threads by state "
     "(bottom)."),
    ("movements", "Movements per rebalance",
     "Tasks whose active, or a standby copy, landed on a client that did not hold it before the rebalance; past "
     "60 rebalances summed per bin of rebalances. The black line counts every move so far."),
    ("restore_timeline", "Records left to restore over time",
     "Changelog records the clients still had to restore, and the tasks no client was processing; below, one "
     "tick per rebalance in the row of its reason."),
    ("rack_traffic", "Rack traffic matrix",
     "Last assignment: partitions read per client rack and replica rack (actives read their source partitions, "
     "standbys their changelogs)."),
)


def _summary(data: ReportData) -> str:
    s = data.summary
    converged = s.get("converged")
    state = ('<span class="ok">converged</span>' if converged else '<span class="bad">did not converge</span>')
    settled = s.get("settled_at_ms")
    by_reason = s.get("by_reason") or {}
    parts = [
        f"<span>{state}{'' if settled is None else ' at +' + duration(int(settled))}</span>",
        f"<span>{fmt(s.get('rebalances', len(data.rebalances)))} rebalances</span>",
        f"<span>{fmt(s.get('probing_rebalances', 0))} probing</span>",
        "<span>" + ", ".join(f"{escape(str(k))}: {fmt(v)}" for k, v in by_reason.items()) + "</span>",
    ]
    html = '<p class="summary">' + "".join(parts) + "</p>"
    if s.get("stopped_reason"):
        html += f'<p class="bad">stopped: {escape(str(s["stopped_reason"]))}</p>'
    for note in s.get("notes") or ():
        html += f'<p class="meta">note: {escape(str(note))}</p>'
    return html


def reason_legend(rows: Sequence[RebalanceRow]) -> str:
    """The colours of the reasons the run's rebalances had (by their first reason), in the charts' order."""
    present = {first_reason(r) for r in rows}
    return colour_legend("reason-legend", "Why each rebalance happened:",
                         [(reason, colour) for reason, colour in REASON_COLOURS.items() if reason in present])


def first_and_last(data: ReportData) -> str:
    """The first and the last assignment's metrics side by side, the better of each row marked."""
    if not data.simulated or len(data.rebalances) < 2:
        return metrics_table([("assignment", data.final_metrics)])
    columns = {"first assignment": data.first_metrics, "last assignment": data.final_metrics}
    return metrics_table(list(columns.items()), best_values(columns))


def _rebalance_table(rows: Sequence[RebalanceRow]) -> str:
    head = ("#", "time", "reasons", "clients", "error", "probing", "active moves", "standby moves",
            "to restore", "left to restore", "not running", "active skew")
    body = []
    for r in rows:
        m = r.metrics
        error = f'<span class="{"ok" if r.error == "NONE" else "bad"}">{escape(r.error)}</span>'
        cells = (str(r.index), duration(r.offset_ms), escape(", ".join(r.reasons)), fmt(m.get("clients", "")),
                 error, "yes" if r.probing_rebalance_needed else "no", fmt(m.get("active_moves", "")),
                 fmt(m.get("standby_moves", "")), fmt(m.get("records_to_restore", "")),
                 fmt(r.active_records_left + r.standby_records_left), fmt(r.tasks_not_running),
                 fmt(m.get("active_load_skew", "")))
        body.append("<tr>" + "".join(f'<td{" class=text" if i == 2 else ""}>{c}</td>' for i, c in enumerate(cells))
                    + "</tr>")
    header = "".join(f'<th{" class=text" if i == 2 else ""}>{h}</th>' for i, h in enumerate(head))
    return f'<div class="scroll"><table><thead><tr>{header}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def render_html(data: ReportData, images: Mapping[str, bytes | str], sections: str = "") -> str:
    """The page: header, summary and totals, the reason legend, the figures present in ``images`` (PNG bytes or
    ``<svg>`` text), ``sections`` (HTML: the topology), the first and last assignment's metrics, every
    rebalance."""
    figures = "".join(figure(key, title, caption, images[key]) for key, title, caption in FIGURES if key in images)
    meta = (f"assignor <b>{escape(data.assignor)}</b> · seed {data.seed} · {escape(data.protocol)} protocol · "
            f"{duration(data.end_ms - data.start_ms)} simulated · from {escape(data.source)}")
    totals = data.totals
    body = (
        _summary(data)
        + ("" if totals is None else "<h2>Run totals</h2>" + totals_box(totals))
        + reason_legend(data.rebalances)
        + figures
        + sections
        + "<h2>Metrics of the first and the last assignment</h2>" + first_and_last(data)
        + "<h2>Rebalances</h2>" + _rebalance_table(data.rebalances)
    )
    return page(f"taskassign simulation: {data.scenario}", meta, body)
