"""The page of ``taskassign compare --out``: several assignors on one input overlaid on one page: their colours,
the run totals and the metrics as tables with the better value of each row marked, and the charts with one
line per assignor. Shared pieces are in ``page``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape

from taskassign.analysis.compare import Comparison, best_values
from taskassign.report.data import ReportData
from taskassign.report.overlay import assignor_colour
from taskassign.report.page import colour_legend, duration, figure, metrics_table, page, totals_table

__all__ = ("OVERLAY_FIGURES", "render_compare_html")

#: Figures in page order: key in the images mapping, title, caption.
OVERLAY_FIGURES = (
    ("thread_state_overlay", "Load per thread",
     "Last assignment of each assignor: every thread's state (left) and tasks (right) over the mean per thread, "
     "heaviest first; a flat line at 1.0 is perfectly even."),
    ("restore_overlay", "Records left to restore over time",
     "Changelog records the clients still had to restore, and the tasks no client was processing, per assignor."),
    ("movements_overlay", "Moves and rebalances over time",
     "Tasks moved (active and standby) and rebalances so far, per assignor."),
)


def _stopped(runs: Sequence[ReportData]) -> str:
    """The runs that stopped early (an invalid assignment, a limit), with why."""
    items = [f"<li><b>{escape(run.assignor)}</b>: {escape(str(run.summary['stopped_reason']))}</li>"
             for run in runs if run.summary.get("stopped_reason")]
    return "" if not items else '<p class="bad">Runs stopped early:</p><ul>' + "".join(items) + "</ul>"


def _first_assignments(runs: Sequence[ReportData]) -> str:
    """Each assignor's first assignment (its answer to the input itself), to set against where it ended."""
    first = {run.assignor: run.first_metrics for run in runs}
    return ("<h2>Metrics of each assignor's first assignment</h2>"
            + metrics_table(list(first.items()), best_values(first)))


def render_compare_html(runs: Sequence[ReportData], comparison: Comparison, images: Mapping[str, bytes | str],
                        *, scenario: str, events: str | None = None, sections: str = "") -> str:
    """The overlay page of ``runs`` (one per assignor, in ``comparison``'s order) with the figures present in
    ``images`` and ``sections`` (HTML: the topology) after the metrics."""
    names = [run.assignor for run in runs]
    legend = colour_legend("assignor-legend", "Assignors:", [(n, assignor_colour(i)) for i, n in enumerate(names)])
    simulated = bool(comparison.totals)
    if simulated:
        span = max(run.end_ms - run.start_ms for run in runs)
        meta = (f"{len(runs)} assignors · simulated with {escape(events or 'an events file')} · up to "
                f"{duration(span)} simulated")
    else:
        meta = f"{len(runs)} assignors · one rebalance each"
    figures = "".join(figure(key, title, caption, images[key])
                      for key, title, caption in OVERLAY_FIGURES if key in images)
    columns = [(n, comparison.metrics[n]) for n in names]
    body = (
        legend
        + ("<h2>Run totals</h2>" + totals_table(names, comparison.totals, comparison.best_totals())
           if simulated else "")
        + _stopped(runs)
        + figures
        + ("<h2>Metrics of each assignor's last assignment</h2>" if simulated else "<h2>Metrics</h2>")
        + '<p class="meta">✓ marks the better value of a row (lower or higher, as the metric says; no mark where '
          "all are equal or neither is better).</p>"
        + metrics_table(columns, comparison.best_metrics())
        + (_first_assignments(runs) if simulated else "")
        + sections
    )
    return page(f"taskassign compare: {scenario}", meta, body)
