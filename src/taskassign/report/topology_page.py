"""The topology page (``taskassign report GROUP.json|SCENARIO|STREAMS-GROUP``) and the topology section the
simulation and compare pages include: the topology diagram, the tasks on the processes with what moves, the
legend and a table per process.

``input_kind`` tells the report command's inputs apart by their ``format`` header, so a simulation result still
goes to the simulation page.
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

from taskassign.errors import UserInputError
from taskassign.formats.json_io import load_json_file, write_output_text
from taskassign.report.page import page
from taskassign.report.topology_graph import graph_svg
from taskassign.report.topology_model import ROLES, TopologyView
from taskassign.report.topology_placement import ordered_processes, placement_svg, use_compact
from taskassign.report.topology_svg import COLOURS

__all__ = ("TOPOLOGY_KINDS", "build_topology_report", "input_kind", "read_topology_view", "topology_section",
           "write_topology_report")

#: The format header of each input the topology page reads.
TOPOLOGY_KINDS = {"taskassign/group/v1": "group", "taskassign/scenario/v1": "scenario",
                  "taskassign/streams-group/v1": "streams-group"}
SIMULATION_FORMAT = "taskassign/simulation/v1"

STYLE = """
.topo-scroll { overflow: auto; max-height: 85vh; border: 1px solid #ddd; margin: 0.5em 0 1em; background: #fff; }
.topo-scroll svg { display: block; max-width: none; }
.topo-legend { display: flex; flex-wrap: wrap; gap: 1.2em; font-size: 0.85em; margin: 0.4em 0; color: #333; }
.topo-legend span { white-space: nowrap; }
.topo-legend i { display: inline-block; width: 1.6em; height: 0.9em; margin-right: 0.35em; vertical-align: middle;
                 border-radius: 2px; }
"""


def input_kind(path: str | Path) -> tuple[str, Any]:
    """``("simulation", None)`` for a simulation result (a directory or ``taskassign/simulation/v1``), else
    ``(kind, document)`` with kind ``group``, ``scenario`` or ``streams-group`` from the format header (an
    untagged document with ``subtopologies`` and ``members`` is a streams group, as Kafka's goldens are)."""
    from taskassign.streams_protocol.format import is_streams_group_document

    p = Path(path)
    if p.is_dir():
        return "simulation", None
    doc = load_json_file(p)
    fmt = doc.get("format") if isinstance(doc, dict) else None
    if fmt == SIMULATION_FORMAT:
        return "simulation", doc
    if fmt in TOPOLOGY_KINDS:
        return TOPOLOGY_KINDS[fmt], doc
    if is_streams_group_document(doc):
        return "streams-group", doc
    known = ", ".join([SIMULATION_FORMAT, *TOPOLOGY_KINDS])
    raise UserInputError(f"{path}: $.format: expected one of {known} (a simulation result, a group file, a scenario "
                         f"or a streams group), got {fmt!r}")


def read_topology_view(path: str | Path, kind: str, doc: Any, *, assignor: str | None = None,
                       plan: str | Path | None = None) -> TopologyView:
    """The view of a group file, scenario or streams group: the placement it records, then ``assignor``'s
    (default: the file's own, else high_availability; a streams group's broker-side assignor), or the
    assignment of ``plan`` (a ``taskassign plan`` file)."""
    if plan is not None:
        return _with_plan(path, kind, doc, plan)
    from taskassign.report import topology_inputs as inputs

    source = str(path)
    if kind == "streams-group":
        from taskassign.streams_protocol.assignors import run_assignor
        from taskassign.streams_protocol.format import parse_streams_group, streams_group_name

        group = parse_streams_group(doc, source=source, default_name=streams_group_name(path))
        name = assignor or group.assignor
        return inputs.streams_group_view(group, run_assignor(group, name),
                                         after_label=f"the broker's {name} assignor")
    from taskassign.leader.assign import assign_scenario

    if kind == "group":
        from taskassign.formats.group import parse_group
        from taskassign.leader.group import group_scenario

        spec = parse_group(doc, source=source, default_name=Path(path).name.removesuffix(".json")
                           .removesuffix(".group"))
        scenario = group_scenario(spec)
        name = assignor or (spec.capture.assignor if spec.capture else "high_availability")
        result = assign_scenario(scenario, name)
        return inputs.group_view(spec, scenario, result.group, after_label=f"{result.assignor}'s assignment")
    from taskassign.formats.scenario import parse_scenario

    scenario = parse_scenario(doc, source=source, default_name=Path(path).name.removesuffix(".json")
                              .removesuffix(".scenario"))
    result = assign_scenario(scenario, assignor or "high_availability")
    return inputs.scenario_view(scenario, result.group, after_label=f"{result.assignor}'s assignment")


def _with_plan(path: str | Path, kind: str, doc: Any, plan: str | Path) -> TopologyView:
    """The file's own assignment -> the plan's (checked as ``taskassign approve`` checks it)."""
    from dataclasses import replace

    from taskassign.bridge.plans import parse_plan, plan_misfit
    from taskassign.report import topology_inputs as inputs

    document = parse_plan(load_json_file(plan), source=str(plan))
    label = f"the plan {document['plan_id']} ({document['assignor']})"
    source = str(path)
    if kind == "streams-group":
        from taskassign.streams_protocol.format import parse_streams_group, streams_group_name

        group = parse_streams_group(doc, source=source, default_name=streams_group_name(path))
        view = inputs.streams_group_view(group, None)
        members = {m.member_id: m.process_id for m in group.members}
        standby = int(group.configs.get("num.standby.replicas", "0") or 0)
        owners, names = list(members), [f"{s}:{p}" for s, p in view.tasks]
        placed = inputs.plan_placement(document["clients"], view.before, standby, label, members)
    else:
        from taskassign.formats.scenario import parse_scenario

        if kind == "group":
            from taskassign.formats.group import parse_group
            from taskassign.leader.group import group_scenario

            spec = parse_group(doc, source=source)
            scenario = group_scenario(spec)
            view = inputs.group_view(spec, scenario, None)
        else:
            scenario = parse_scenario(doc, source=source)
            view = inputs.scenario_view(scenario, None)
        owners, names = [p.id for p in view.processes], [f"{s}_{p}" for s, p in view.tasks]
        placed = inputs.plan_placement(document["clients"], view.before, scenario.state.configs.num_standby_replicas,
                                       label)
    misfit = plan_misfit(document, names, owners)
    if misfit is not None:
        raise UserInputError(f"{plan}: the plan is not for {path}: {misfit}")
    return replace(view, after=placed, notes=())


def _legend(view: TopologyView) -> str:
    swatches = [
        (f"background:{COLOURS['active']}", "active"),
        (f"border:1.5px solid {COLOURS['standby']}", "standby"),
        (f"border:1.5px dashed {COLOURS['warmup']}", "warm-up"),
    ]
    if view.after is not None:
        swatches += [(f"border:2px solid {COLOURS['move']}", "arrived (moved or new copy)"),
                     (f"border:1.5px dashed {COLOURS['ghost']}", "where an active ran before")]
    return _swatches(swatches)


def _graph_legend() -> str:
    items = [(f"background:{COLOURS['source']};border:1px solid #999", "source topic"),
             (f"background:{COLOURS['repartition']};border:1px solid #999", "repartition topic"),
             (f"background:{COLOURS['sink']};border:1px solid #999", "sink topic"),
             (f"background:{COLOURS['changelog']};border:1px solid #2a7d2a", "changelog of a store"),
             ("border-left:2px solid #7b3294", "co-partitioned inputs")]
    return _swatches(items)


def _swatches(items: list[tuple[str, str]]) -> str:
    return '<div class="topo-legend">' + "".join(
        f'<span class="topo-legend-item"><i style="{style}"></i>{escape(name)}</span>' for style, name in items
    ) + "</div>"


def _counts(view: TopologyView) -> dict[str, dict[str, int]]:
    counts = {p.id: dict.fromkeys(ROLES, 0) for p in view.processes}
    shown = view.shown
    for _, role, pid in shown.copies() if shown is not None else ():
        counts.setdefault(pid, dict.fromkeys(ROLES, 0))[role] += 1
    return counts


def _process_table(view: TopologyView) -> str:
    counts = _counts(view)
    moves = view.moves()
    incoming: dict[str, int] = {}
    outgoing: dict[str, int] = {}
    for m in moves:
        incoming[m.target] = incoming.get(m.target, 0) + 1
        if m.source is not None:
            outgoing[m.source] = outgoing.get(m.source, 0) + 1
    head = ["process", view.band_kind, "process id", "threads", "active", "standby", "warm-up"]
    if view.after is not None:
        head += ["arrived", "actives left"]
    rows = []
    for p in ordered_processes(view):
        c = counts[p.id]
        cells = [escape(p.label), escape(p.band or ""), f"<code>{escape(p.id)}</code>",
                 "" if p.threads is None else str(p.threads), str(c["active"]), str(c["standby"]), str(c["warmup"])]
        if view.after is not None:
            cells += [str(incoming.get(p.id, 0)), str(outgoing.get(p.id, 0))]
        rows.append("<tr>" + "".join(f'<td{" class=text" if i < 3 else ""}>{v}</td>' for i, v in enumerate(cells))
                    + "</tr>")
    header = "".join(f'<th{" class=text" if i < 3 else ""}>{h}</th>' for i, h in enumerate(head))
    return (f'<div class="scroll"><table class="topo-processes"><thead><tr>{header}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div>')


def _moves_line(view: TopologyView, compact: bool) -> str:
    if view.before is None or view.after is None:
        shown = view.shown
        return f"<p class=\"meta\">Drawn: {escape(shown.label if shown else 'no assignment')}.</p>"
    moves = view.moves()
    by_role = {role: sum(1 for m in moves if m.role == role) for role in ROLES}
    actives = sum(1 for m in moves if m.role == "active" and m.source is not None)
    how = "outlined in red" if compact else "ringed in red"
    arrows = "" if compact else ", arrows"
    return (f'<p class="meta" id="topology-moves">From <b>{escape(view.before.label)}</b> to '
            f"<b>{escape(view.after.label)}</b>: {by_role['active']} active tasks land on another process "
            f"({actives} moved from a running owner{arrows}), {by_role['standby']} standby and "
            f"{by_role['warmup']} warm-up copies are new where they are ({how}).</p>")


def topology_section(view: TopologyView, *, prefix: str = "topology", heading: str = "Topology",
                     graph: bool = True) -> str:
    """The section: the topology diagram (unless ``graph`` is false), the tasks on the processes (compact past a
    dozen processes), what moves, the per-process table. ``prefix`` keeps element ids apart when a page has
    several sections."""
    compact = use_compact(view)
    notes = "".join(f'<p class="meta">note: {escape(n)}</p>' for n in view.notes)
    how = ("compact view: one row per process, one column per sub-topology, a square per task copy"
           if compact else "one row per sub-topology, one column per process, a chip per task copy (its partition)")
    bands = "" if not any(p.band for p in view.processes) else f"; processes grouped by {escape(view.band_kind)}"
    return (
        f"<style>{STYLE}</style>"
        f'<section class="topology" id="{prefix}">'
        + (f"<h2>{escape(heading)}</h2>"
           f'<p class="meta">{len(view.subtopologies)} sub-topologies, {len(view.tasks)} tasks, '
           f"{len(view.processes)} processes. Upstream sub-topologies first; edges follow repartition topics.</p>"
           + _graph_legend()
           + f'<div class="topo-scroll">{graph_svg(view.subtopologies, svg_id=f"{prefix}-graph")}</div>'
           if graph else "")
        + f"<h2>{escape(heading + ': tasks on processes' if graph else heading)}</h2>"
        + f'<p class="meta">{how}{bands}.</p>' + _moves_line(view, compact) + notes + _legend(view)
        + f'<div class="topo-scroll">{placement_svg(view, svg_id=f"{prefix}-placement", compact=compact)}</div>'
        + _process_table(view) + "</section>"
    )


def build_topology_report(view: TopologyView, source: str = "") -> str:
    """The whole page of ``view``."""
    meta = f"{escape(view.kind)}" + (f" · from {escape(source)}" if source else "")
    return page(f"taskassign topology: {view.name}", meta, topology_section(view))


def write_topology_report(path: str | Path, out: str | Path, kind: str, doc: Any, *,
                          assignor: str | None = None, plan: str | Path | None = None) -> Path:
    """Read a group file, scenario or streams group and write its topology page to ``out``."""
    view = read_topology_view(path, kind, doc, assignor=assignor, plan=plan)
    target = Path(out)
    write_output_text(build_topology_report(view, str(path)), target)
    return target
