"""The visual report of a simulation: PNG plots (matplotlib) in one self-contained HTML page.

``build_report(read_simulation("out/"))`` returns the page as a string. matplotlib is the ``report``
extra; without it, importing this package raises ReportUnavailableError with the install hint.
"""

from __future__ import annotations

from pathlib import Path

from taskassign.errors import ReportUnavailableError
from taskassign.formats.json_io import write_output_text
from taskassign.report.data import ReportData, parse_simulation, read_simulation

__all__ = ("ReportData", "ReportUnavailableError", "build_report", "parse_simulation", "read_simulation",
           "write_report")


def build_report(data: ReportData) -> str:
    """The HTML page of ``data`` with every plot inlined."""
    try:
        from taskassign.report import plots
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ReportUnavailableError(
            f"the report needs matplotlib ({exc}); install it with: pip install 'taskassign[report]'"
        ) from None
    from taskassign.report.html import render_html

    images = {
        "client_load": plots.client_load_png(data.clients) if data.clients else None,
        "movements": plots.movements_png(data.rebalances) if data.rebalances else None,
        "restore_timeline": plots.restore_timeline_png(data.samples, data.rebalances) if data.samples else None,
        "rack_traffic": plots.rack_traffic_png(data.rack_traffic),
    }
    return render_html(data, {k: v for k, v in images.items() if v is not None})


def write_report(result: str | Path, out: str | Path) -> Path:
    """Read a simulation result (file or --out directory) and write its report to ``out``."""
    html = build_report(read_simulation(result))
    target = Path(out)
    write_output_text(html, target)
    return target
