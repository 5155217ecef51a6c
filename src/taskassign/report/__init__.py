"""The visual report: one run (``build_report``: a simulation's plots and tables) or several assignors on one
input overlaid (``build_compare_report``, for ``taskassign compare --out``), or a fleet pipeline's output
(``build_fleet_report``), each as one self-contained HTML page.

``build_report(read_simulation("out/"))`` returns the page as a string. The charts are SVG the report draws
itself (report.svg), so a page needs no plotting library and renders in a fraction of a second.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from taskassign.analysis.compare import Comparison
from taskassign.formats.json_io import write_output_text
from taskassign.report.data import ReportData, assignment_data, parse_simulation, read_simulation

__all__ = ("ReportData", "assignment_data", "build_compare_report", "build_fleet_report",
           "build_report",
           "parse_simulation", "read_simulation", "write_report")


def _plots() -> tuple[ModuleType, ModuleType, ModuleType]:
    """The chart modules (plots, timeline, overlay): SVG drawn directly, no plotting library needed."""
    from taskassign.report import overlay, plots, timeline

    return plots, timeline, overlay


def _unit(data: ReportData) -> str:
    return "B" if data.state_unit == "bytes" else ""


def build_report(data: ReportData, sections: str = "") -> str:
    """The HTML page of ``data`` with every plot inlined, and ``sections`` (HTML: the topology)."""
    plots, timeline, _ = _plots()
    from taskassign.report.html import render_html

    images: dict[str, bytes | str | None] = {
        "client_load": plots.client_load_svg(data.clients, _unit(data)) if data.clients else None,
        "movements": timeline.movements_svg(data.rebalances) if data.rebalances else None,
        "restore_timeline": timeline.restore_timeline_svg(data.samples, data.rebalances) if data.samples else None,
        "rack_traffic": plots.rack_traffic_svg(data.rack_traffic),
    }
    return render_html(data, {k: v for k, v in images.items() if v is not None}, sections)


def build_compare_report(runs: Sequence[ReportData], comparison: Comparison, *, scenario: str,
                         events: str | None = None, sections: str = "") -> str:
    """One page overlaying ``runs`` (one per assignor, in ``comparison``'s order)."""
    _, _, overlay = _plots()
    from taskassign.report.compare_html import render_compare_html

    images: dict[str, bytes | str] = {"thread_state_overlay": overlay.thread_state_overlay_svg(runs)}
    if any(run.samples for run in runs):
        images["restore_overlay"] = overlay.restore_overlay_svg(runs)
    if any(run.rebalances for run in runs):
        images["movements_overlay"] = overlay.movements_overlay_svg(runs)
    return render_compare_html(runs, comparison, images, scenario=scenario, events=events, sections=sections)


def build_fleet_report(output: str | Path) -> str:
    """The fleet page of the pipeline output directory ``output`` (no matplotlib, no Spark: pyarrow reads it)."""
    from taskassign.report.fleet_data import read_fleet_data
    from taskassign.report.fleet_html import render_fleet_html

    return render_fleet_html(read_fleet_data(output))


def write_report(result: str | Path, out: str | Path) -> Path:
    """Read a simulation result (file or --out directory; with the topology and the last assignment when the
    directory has them) or a pipeline output (a directory with its ``manifest.json``) and write its page to
    ``out``."""
    from taskassign.pipeline.output import MANIFEST_FILE  # not pipeline.results: pyarrow only for a fleet

    if Path(result).is_dir() and (Path(result) / MANIFEST_FILE).is_file():
        html = build_fleet_report(result)
    else:
        from taskassign.report.topology_sections import simulation_section

        html = build_report(read_simulation(result), simulation_section(result))
    target = Path(out)
    write_output_text(html, target)
    return target
