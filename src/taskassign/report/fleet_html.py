"""The fleet page (``taskassign report FLEET_OUTPUT``): a pipeline run on one page. Outcomes per assignor, the
applications that need attention (every reason, and the commands that show one up close), the main metrics'
distributions, the fleet metrics, the assignor comparison, the rejected input rows and every application.

It stays usable at 10,000 applications: the charts are histograms (a few dozen bars whatever the fleet's size),
and the long tables carry their rows as JSON that a little inline script shows a page at a time, filtered and
sorted; without the script the first page is there as plain HTML. Nothing is fetched: one file, offline.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from taskassign.fleet.reasons import STATUSES
from taskassign.report.colours import ASSIGNOR_COLOURS
from taskassign.report.fleet_data import APP_COLUMNS, DISTRIBUTIONS, MAX_REJECTED_ROWS, FleetData
from taskassign.report.page import colour_legend, fmt, page
from taskassign.report.svg import histogram_svg, short_number, svg_element, text

__all__ = ("PAGE_ROWS", "STATUS_COLOURS", "render_fleet_html")

#: Rows shown per page of a long table.
PAGE_ROWS = 50
STATUS_COLOURS = {"ASSIGNED": "#2ca02c", "KEPT_PREVIOUS": "#ff7f0e", "INVALID_ASSIGNMENT": "#d62728",
                  "REJECTED": "#7f7f7f"}
FLEET_STYLE = """
.grid { display: flex; flex-wrap: wrap; gap: 0.8em; } .grid svg { border: 1px solid #ddd; }
.paged-controls { margin: 0.4em 0; display: flex; gap: 0.6em; align-items: center; font-size: 0.9em; }
.paged-controls input { width: 16em; } th.sortable { cursor: pointer; } code { font-size: 0.95em; }
td.reasons { white-space: normal; text-align: left; max-width: 40em; } td.cmd { text-align: left; }
td.cmd code { white-space: pre-wrap; word-break: break-all; font-size: 0.85em; }
"""
#: Shows a ``.paged`` table a page at a time from its JSON rows, with a filter box and sortable columns.
SCRIPT = """<script>
document.querySelectorAll("table.paged").forEach(table => {
  const rows = JSON.parse(document.getElementById(table.dataset.rows).textContent);
  const size = Number(table.dataset.page), body = table.tBodies[0], codeCols = JSON.parse(table.dataset.code);
  const controls = table.parentElement.querySelector(".paged-controls");
  const [filter, prev, next, info] = ["input", ".prev", ".next", ".info"].map(s => controls.querySelector(s));
  let shown = rows, pageNo = 0, sortCol = -1, sortDir = 1;
  const draw = () => {
    const pages = Math.max(1, Math.ceil(shown.length / size));
    pageNo = Math.min(pageNo, pages - 1);
    body.replaceChildren(...shown.slice(pageNo * size, pageNo * size + size).map(row => {
      const tr = document.createElement("tr");
      row.forEach((cell, i) => {
        const td = document.createElement("td");
        td.className = table.tHead.rows[0].cells[i].dataset.cls || "";
        const text = cell === null ? "" : (typeof cell === "number" ? cell.toLocaleString("en-US") : String(cell));
        if (codeCols.includes(i)) { const c = document.createElement("code"); c.textContent = text; td.append(c); }
        else td.textContent = text;
        tr.append(td);
      });
      return tr;
    }));
    info.textContent = `rows ${shown.length ? pageNo * size + 1 : 0}-${Math.min(shown.length, (pageNo + 1) * size)}` +
      ` of ${shown.length.toLocaleString("en-US")} · page ${pageNo + 1} of ${pages}`;
    prev.disabled = pageNo === 0; next.disabled = pageNo >= pages - 1;
  };
  filter.addEventListener("input", () => {
    const q = filter.value.toLowerCase();
    shown = q ? rows.filter(r => r.some(c => c !== null && String(c).toLowerCase().includes(q))) : rows;
    pageNo = 0; draw();
  });
  prev.addEventListener("click", () => { pageNo--; draw(); });
  next.addEventListener("click", () => { pageNo++; draw(); });
  Array.from(table.tHead.rows[0].cells).forEach((th, i) => {
    th.classList.add("sortable");
    th.addEventListener("click", () => {
      sortDir = sortCol === i ? -sortDir : 1; sortCol = i;
      const key = v => v === null ? -Infinity : v;
      shown = shown.slice().sort((a, b) => (key(a[i]) < key(b[i]) ? -1 : key(a[i]) > key(b[i]) ? 1 : 0) * sortDir);
      pageNo = 0; draw();
    });
  });
  draw();
});
</script>"""


def _json_script(element_id: str, rows: Sequence[Sequence[Any]]) -> str:
    """Rows as JSON in a script element the browser does not run (``</`` escaped so no cell can end it)."""
    data = json.dumps(rows, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")
    return f'<script type="application/json" id="{element_id}">{data}</script>'


def _cell_text(value: Any) -> str:
    return "" if value is None else fmt(value)


def paged_table(table_id: str, headers: Sequence[tuple[str, str]], rows: Sequence[Sequence[Any]], *,
                code_columns: Sequence[int] = ()) -> str:
    """A long table: the first ``PAGE_ROWS`` rows as HTML, all of them as JSON for the page's script (paging,
    filtering, sorting). ``headers`` are (title, cell class)."""
    head = "".join(f'<th class="{cls}" data-cls="{cls}">{escape(title)}</th>' for title, cls in headers)
    body = []
    for row in rows[:PAGE_ROWS]:
        cells = []
        for i, value in enumerate(row):
            content = _cell_text(value)
            content = f"<code>{content}</code>" if i in code_columns else content
            cells.append(f'<td class="{headers[i][1]}">{content}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    controls = (f'<div class="paged-controls"><input type="search" placeholder="filter {len(rows):,} rows" '
                f'aria-label="filter"><button class="prev">&lt; previous</button><button class="next">next &gt;'
                f'</button><span class="info">rows 1-{min(len(rows), PAGE_ROWS)} of {len(rows):,}</span></div>')
    return (f'<div class="paged-wrap">{controls}<table class="paged" id="{table_id}" data-rows="{table_id}-rows" '
            f'data-page="{PAGE_ROWS}" data-code="{json.dumps(list(code_columns))}"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>{_json_script(table_id + '-rows', rows)}</div>")


def _label(key: str) -> str:
    return key or "count"


def _outcomes(data: FleetData) -> str:
    """Applications by status per assignor: a table and one stacked bar per assignor."""
    keys = data.keys
    head = "".join(f"<th>{escape(_label(k))}</th>" for k in keys)
    rows = []
    for status, meaning in STATUSES.items():
        counts = [data.by_status.get(k, {}).get(status, 0) for k in keys]
        cls = "ok" if status == "ASSIGNED" else ("bad" if any(counts) else "")
        cells = "".join(f"<td>{n:,}</td>" for n in counts)
        rows.append(f'<tr><td class="text {cls}">{status}</td>{cells}<td class="text">{escape(meaning)}</td></tr>')
    table = (f'<table id="outcomes"><thead><tr><th class="text">status</th>{head}<th class="text">meaning</th></tr>'
             f"</thead><tbody>{''.join(rows)}</tbody></table>")
    width, bar = 1000, 22
    parts = []
    for position, key in enumerate(keys):
        per_status = data.by_status.get(key, {})
        total = sum(per_status.values()) or 1
        y = 8 + position * (bar + 14)
        x = 150.0
        parts.append(text(144, y + 15, _label(key) if key else "applications", anchor="end"))
        for status, colour in STATUS_COLOURS.items():
            n = per_status.get(status, 0)
            if not n:
                continue
            w = max(2.0, n / total * (width - 160))  # a single rejected application still shows
            parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar}" fill="{colour}">'
                         f"<title>{status}: {n:,}</title></rect>")
            x += w
    height = 8 + len(keys) * (bar + 14)
    legend = colour_legend("status-legend", "Status:", list(STATUS_COLOURS.items()))
    return legend + svg_element(width, height, "".join(parts), "applications by status") + table


def _attention(data: FleetData) -> str:
    if not data.attention:
        return "<p>No application needs attention.</p>"
    snapshot = shlex.quote(data.snapshot)
    rows = []
    for item in data.attention:
        app = shlex.quote(item.app_id)
        scenario = shlex.quote(f"{item.app_id}.scenario.json")
        assignor = f" -a {shlex.quote(item.ran_with)}" if item.ran_with else ""
        command = (f"taskassign pipeline export-scenario --input {snapshot} --app {app} -o {scenario} && "
                   f"taskassign assign {scenario}{assignor} --metrics --explain")
        rows.append([item.app_id, item.assignor or "", item.status, "; ".join(item.reasons), command])
    headers = [("application", "text"), ("assignor", "text"), ("status", "text"), ("reasons", "reasons"),
               ("look closer", "cmd")]
    if not data.assignors:
        headers.pop(1)
        rows = [[r[0], *r[2:]] for r in rows]
    note = (f"<p class=\"meta\">{len(data.attention):,} application(s): the worst of each needs-attention metric "
            "(docs/pipeline.md, needs_attention) and every application the errors table flags. The command writes "
            "the application's scenario exactly as the pipeline gave it to the engine and assigns it again with "
            "every metric and move explained.</p>")
    return note + paged_table("attention", headers, rows, code_columns=(len(headers) - 1,))


def _distributions(data: FleetData) -> str:
    parts = []
    for position, key in enumerate(data.keys):
        stats = {row["metric"]: row for row in data.fleet_metrics.get(key, ())}
        charts = []
        for metric in DISTRIBUTIONS:
            values = data.distributions.get(key, {}).get(metric, ())
            row = stats.get(metric)
            marks = [(p, float(row[p])) for p in ("p50", "p90") if row and row.get(p) is not None]
            charts.append(f'<div class="svg-plot" id="hist-{position}-{metric}">'
                          + histogram_svg(metric, values, marks=marks, colour=ASSIGNOR_COLOURS[position % 8])
                          + "</div>")
        heading = f"<h3>{escape(key)}</h3>" if key else ""
        parts.append(heading + '<div class="grid">' + "".join(charts) + "</div>")
    return ("<p class=\"meta\">Applications the engine ran (every status but REJECTED) by value; the dotted and "
            "dashed lines are the fleet's p50 and p90 (fleet_metrics).</p>" + "".join(parts))


def _fleet_metrics(data: FleetData) -> str:
    key = data.keys[0]
    rows = data.fleet_metrics.get(key, ())
    if not rows:
        return "<p>The engine ran no application.</p>"
    columns = ("apps", "sum", "mean", "min", "p50", "p90", "p95", "max")
    body = "".join(
        f'<tr><td class="text"><code>{escape(str(r["metric"]))}</code></td>'
        + "".join(f"<td>{'' if r.get(c) is None else escape(short_number(float(r[c])))}</td>" for c in columns)
        + "</tr>" for r in rows)
    head = "".join(f"<th>{c}</th>" for c in columns)
    under = f" under {escape(key)} (every assignor's: the fleet_metrics table)" if key else ""
    return (f'<p class="meta">Every metric over the applications the engine ran{under}.</p><div class="scroll">'
            f'<table id="fleet-metrics"><thead><tr><th class="text">metric</th>{head}</tr></thead><tbody>{body}'
            "</tbody></table></div>")


def _comparison(data: FleetData) -> str:
    if not data.comparison:
        return ""
    head = "".join(f"<th>{c}</th>" for c in ("apps", "wins", "ties", "diff p10", "diff p50", "diff p90"))
    body = []
    for row in data.comparison:
        diffs = "".join(f"<td>{'' if row.get(c) is None else escape(short_number(float(row[c])))}</td>"
                        for c in ("diff_p10", "diff_p50", "diff_p90"))
        body.append(f'<tr><td class="text"><code>{escape(str(row["metric"]))}</code></td>'
                    f'<td class="text">{escape(str(row["assignor"]))}</td><td>{fmt(row["apps"])}</td>'
                    f'<td>{fmt(row["wins"])}</td><td>{fmt(row["ties"])}</td>{diffs}</tr>')
    legend = colour_legend("assignor-legend", "Assignors:",
                           [(name, ASSIGNOR_COLOURS[i % 8]) for i, name in enumerate(data.assignors)])
    return (f"<h2>Assignor comparison</h2>{legend}<p class=\"meta\">Per metric (lower is better): applications "
            f"where each assignor alone is lowest (wins) or shares the lowest value (ties), and the percentiles of "
            f"its value minus the baseline's ({escape(data.assignors[0])}): negative is better.</p>"
            f'<div class="scroll"><table id="comparison"><thead><tr><th class="text">metric</th>'
            f'<th class="text">assignor</th>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>')


def _rejected(data: FleetData) -> str:
    if not data.rejected_total:
        return "<p>No input row was rejected.</p>"
    counts = "".join(f'<tr><td class="text">{escape(t)}</td><td class="text">{escape(c)}</td><td>{n:,}</td></tr>'
                     for t, c, n in data.rejected_counts)
    summary = (f'<table id="rejected-counts"><thead><tr><th class="text">table</th><th class="text">reason</th>'
               f"<th>rows</th></tr></thead><tbody>{counts}</tbody></table>")
    cut = ""
    if data.rejected_total > len(data.rejected_rows):
        cut = (f'<p class="meta">The first {MAX_REJECTED_ROWS:,} of {data.rejected_total:,} rows; all of them: '
               f"<code>taskassign pipeline export --input {escape(shlex.quote(data.source))} --output DIR "
               "--table errors</code>.</p>")
    headers = [("table", "text"), ("application", "text"), ("reason code", "text"), ("reason", "reasons"),
               ("row", "cmd")]
    return summary + cut + paged_table("rejected", headers, data.rejected_rows, code_columns=(4,))


def _applications(data: FleetData) -> str:
    columns = list(APP_COLUMNS)
    rows: Sequence[Sequence[Any]] = data.apps
    if not data.assignors:
        keep = [i for i, c in enumerate(columns) if c != "assignor"]
        columns = [columns[i] for i in keep]
        rows = [[row[i] for i in keep] for row in rows]
    text_columns = {"app_id", "assignor", "status", "reason_code"}
    headers = [(c.replace("_", " ") if c != "app_id" else "application", "text" if c in text_columns else "")
               for c in columns]
    return paged_table("applications", headers, [[_plain(v) for v in row] for row in rows])


def _plain(value: Any) -> Any:
    """A cell as JSON carries it: floats rounded to what the page shows."""
    return round(value, 4) if isinstance(value, float) else value


def _input_rows(manifest: Mapping[str, Any]) -> str:
    rows = "".join(f'<tr><td class="text">{escape(name)}</td><td>{fmt(c.get("in"))}</td><td>{fmt(c.get("used"))}'
                   f'</td><td>{fmt(c.get("rejected"))}</td></tr>' for name, c in (manifest.get("rows") or {}).items())
    check = ('<p class="ok">rows in = used + rejected for every table</p>' if manifest.get("reconciled")
             else '<p class="bad">the row counts do not reconcile</p>')
    return (f'<table id="input-rows"><thead><tr><th class="text">table</th><th>in</th><th>used</th><th>rejected</th>'
            f"</tr></thead><tbody>{rows}</tbody></table>{check}")


def render_fleet_html(data: FleetData) -> str:
    """The whole fleet page."""
    manifest = data.manifest
    total = (manifest.get("applications") or {}).get("total", len(data.apps))
    options = manifest.get("options") or {}
    if data.assignors:
        assignors = (f"assignors <b>{', '.join(escape(a) for a in data.assignors)}</b> (baseline "
                     f"{escape(data.assignors[0])})")
    else:
        assignors = f"assignor <b>{escape(str(options.get('assignor') or 'each application’s own'))}</b>"
    meta = (f"{fmt(total)} applications · {assignors} · snapshot {escape(data.snapshot)} · run started "
            f"{escape(str(manifest.get('started_at', '?')))} · taskassign "
            f"{escape(str(manifest.get('taskassign_version', '?')))} · from {escape(data.source)}")
    body = (
        f"<style>{FLEET_STYLE}</style>"
        + "<h2>Outcomes</h2>" + _outcomes(data)
        + f"<h2>Applications that need attention ({len(data.attention):,})</h2>" + _attention(data)
        + "<h2>Distributions of the main metrics</h2>" + _distributions(data)
        + "<h2>Fleet metrics</h2>" + _fleet_metrics(data)
        + _comparison(data)
        + f"<h2>Rejected input rows ({data.rejected_total:,})</h2>" + _rejected(data)
        + f"<h2>Every application ({len(data.apps):,} rows)</h2>" + _applications(data)
        + "<h2>Input rows</h2>" + _input_rows(manifest)
        + SCRIPT
    )
    return page(f"taskassign fleet: {total:,} applications" if isinstance(total, int) else "taskassign fleet",
                meta, body)
