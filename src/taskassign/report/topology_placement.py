"""Each subtopology's tasks on the processes that run them, and what moves.

Two views of the same data, chosen by size:

- **detailed** (up to ``DETAILED_MAX_PROCESSES`` processes): a row per subtopology, a column per process
  (grouped by rack or zone, each band shaded and named); every task copy is a chip labelled with its
  partition: active filled, standby outlined, warm-up dashed. With two assignments, a copy that arrived is
  ringed in red, an active's old place is a grey ghost, and an arrow runs from the ghost to the new place
  (the first ``MAX_ARROWS``).
- **compact** (more processes): a row per process (bands as headed groups), a column per subtopology, every
  task copy a small square in its role's colour, arrivals outlined in red; each row ends with the process's
  counts and moves. 200 processes by 50 subtopologies stay one scrollable picture.

Every task copy is an element with ``data-task``, ``data-role`` and ``data-process``, so tests (and users'
scripts) can check that nothing is missing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from taskassign.report.topology_graph import subtopology_order
from taskassign.report.topology_model import Move, Placement, ProcessNode, TaskKey, TopologyView, task_label
from taskassign.report.topology_svg import COLOURS, fit, rect, svg, text, text_width, title

__all__ = ("DETAILED_MAX_PROCESSES", "ordered_processes", "placement_svg", "use_compact")

DETAILED_MAX_PROCESSES = 12
#: A cell with more task copies than this makes the detailed view unreadable: compact then.
DETAILED_MAX_CHIPS = 48
#: Room above a row's chips for its move arrows (px).
ARROW_ROOM = 14
#: Arrows drawn in the detailed view; past this, the rings and ghosts alone show the moves.
MAX_ARROWS = 80
PAGE_W = 1100
FS = 11


def ordered_processes(view: TopologyView) -> list[ProcessNode]:
    """Processes by band (unknown last), then name, then id."""
    return sorted(view.processes, key=lambda p: (p.band is None, p.band or "", p.label, p.id))


def _cells(placement: Placement | None) -> dict[tuple[str, str], list[tuple[str, int]]]:
    """(subtopology, process) -> [(role, partition)] in role order then partition."""
    cells: dict[tuple[str, str], list[tuple[str, int]]] = {}
    if placement is None:
        return cells
    for (sub, part), role, pid in placement.copies():
        cells.setdefault((sub, pid), []).append((role, part))
    return cells


def use_compact(view: TopologyView) -> bool:
    """True when the detailed view would not be readable."""
    if len(view.processes) > DETAILED_MAX_PROCESSES:
        return True
    return any(len(v) > DETAILED_MAX_CHIPS for v in _cells(view.shown).values())


def placement_svg(view: TopologyView, *, svg_id: str = "topology-placement", compact: bool | None = None) -> str:
    """The placement diagram of ``view`` (compact or detailed as ``use_compact`` decides unless told)."""
    if compact is None:
        compact = use_compact(view)
    return _compact(view, svg_id) if compact else _detailed(view, svg_id)


def _bands(processes: Sequence[ProcessNode]) -> list[tuple[str | None, list[int]]]:
    """Consecutive runs of the same band: (band, indexes)."""
    runs: list[tuple[str | None, list[int]]] = []
    for i, p in enumerate(processes):
        if runs and runs[-1][0] == p.band:
            runs[-1][1].append(i)
        else:
            runs.append((p.band, [i]))
    return runs


def _task_attrs(task: TaskKey, role: str, pid: str, moved: bool) -> str:
    return (f'class="task{" moved" if moved else ""}" data-task="{escape(task_label(task))}" data-role="{role}" '
            f'data-process="{escape(pid)}"')


def _arrivals(view: TopologyView) -> tuple[set[tuple[TaskKey, str, str]], list[Move]]:
    found = view.moves()
    return {(m.task, m.role, m.target) for m in found}, list(found)


# --------------------------------------------------------------------------------------------- detailed


def _detailed(view: TopologyView, svg_id: str) -> str:
    procs = ordered_processes(view)
    subs = subtopology_order(view.subtopologies)
    cells = _cells(view.shown)
    arrived, moves = _arrivals(view)
    ghosts: dict[tuple[str, str], list[int]] = {}
    for m in moves:
        if m.role == "active" and m.source is not None:
            ghosts.setdefault((m.task[0], m.source), []).append(m.task[1])
    label_w = 118
    col_w = max(96.0, min(190.0, (PAGE_W - label_w) / max(len(procs), 1)))
    widest = max((len(str(p)) for s in subs for p in s.partitions), default=1)
    chip_w = max(22.0, text_width("9" * widest, FS - 1) + 8)
    pitch = chip_w + 3
    per_line = max(1, int((col_w - 8) // pitch))
    has_bands = any(p.band is not None for p in procs)
    head = 18 * (2 + has_bands) + 4
    parts: list[str] = []
    # row heights
    heights = []
    # a row with move arrows gets ARROW_ROOM above its chips: a task moves within its sub-topology's row, so its
    # arrow arcs in that room and never over another row
    arrow_rows = {key[0] for key in ghosts}
    for s in subs:
        most = max((len(cells.get((s.id, p.id), [])) + len(ghosts.get((s.id, p.id), [])) for p in procs), default=0)
        room = ARROW_ROOM if s.id in arrow_rows else 0
        heights.append(max(40.0, math.ceil(most / per_line) * 19 + 10 + room))
    total_h = head + sum(heights) + 6
    width = label_w + col_w * len(procs) + 8
    # bands: shaded columns and their names
    y = 4.0
    for k, (band, idx) in enumerate(_bands(procs)):
        x0 = label_w + idx[0] * col_w
        w = col_w * len(idx)
        parts.append(rect(x0, 2, w, total_h - 4, fill=COLOURS[f"band{k % 2}"],
                          attrs=f' class="band" data-band="{escape(band or "")}"'))
        if has_bands:
            name = f"{view.band_kind} {band}" if band is not None else f"{view.band_kind} unknown"
            parts.append(text(x0 + 4, y + 12, fit(name, w - 8, FS), FS, weight="bold", fill="#444", tip=name))
    y += 18 * has_bands
    for i, p in enumerate(procs):
        x = label_w + i * col_w
        parts.append(f'<g class="process" data-process="{escape(p.id)}">'
                     + text(x + 4, y + 12, fit(p.label, col_w - 8, FS), FS, weight="bold", tip=f"{p.label} ({p.id})")
                     + text(x + 4, y + 28, fit(_process_meta(p), col_w - 8, FS - 2), FS - 2, fill="#666") + "</g>")
    y = head
    chip_pos: dict[tuple[TaskKey, str], tuple[float, float]] = {}
    ghost_pos: dict[tuple[TaskKey, str], tuple[float, float]] = {}
    for s, h in zip(subs, heights, strict=True):
        parts.append(f'<line x1="4" x2="{width - 4:.1f}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ccc"/>')
        parts.append(text(6, y + 18, fit(f"Sub-topology {s.id}", label_w - 10, FS), FS, weight="bold",
                          tip=f"Sub-topology {s.id}"))
        parts.append(text(6, y + 32, fit(f"{len(s.partitions)} tasks", label_w - 10, FS - 2), FS - 2, fill="#666"))
        for i, p in enumerate(procs):
            items = [(role, part, False) for role, part in cells.get((s.id, p.id), [])]
            items += [("ghost", part, True) for part in sorted(ghosts.get((s.id, p.id), []))]
            for j, (role, part, ghost) in enumerate(items):
                cx = label_w + i * col_w + 5 + (j % per_line) * pitch
                cy = y + 6 + (ARROW_ROOM if s.id in arrow_rows else 0) + (j // per_line) * 19
                task = (s.id, part)
                if ghost:
                    ghost_pos[(task, p.id)] = (cx + chip_w / 2, cy - 1)
                    parts.append(f'<g class="ghost" data-task="{escape(task_label(task))}" '
                                 f'data-process="{escape(p.id)}">'
                                 + rect(cx, cy, chip_w, 16, fill="#fff", stroke=COLOURS["ghost"], dash="2,2", radius=3)
                                 + text(cx + chip_w / 2, cy + 12, str(part), FS - 1, anchor="middle",
                                        fill=COLOURS["ghost"])
                                 + title(f"task {task_label(task)} ran here as active before") + "</g>")
                    continue
                moved = (task, role, p.id) in arrived
                chip_pos[(task, p.id)] = (cx + chip_w / 2, cy - 3)
                parts.append(_chip(cx, cy, chip_w, task, role, p, moved))
        y += h
    arrows: list[str] = []
    for m in moves:
        if m.role != "active" or m.source is None or len(arrows) >= MAX_ARROWS:
            continue
        a, b = ghost_pos.get((m.task, m.source)), chip_pos.get((m.task, m.target))
        if a is None or b is None:
            continue
        lift = 2 * (ARROW_ROOM - 2)  # the arc's peak is halfway to its control point
        arrows.append(f'<path class="move-arrow" data-task="{escape(task_label(m.task))}" '
                      f'd="M{a[0]:.1f},{a[1]:.1f} Q{(a[0] + b[0]) / 2:.1f},{min(a[1], b[1]) - lift:.1f} '
                      f'{b[0]:.1f},{b[1]:.1f}" fill="none" stroke="{COLOURS["move"]}" stroke-width="1.3" '
                      f'stroke-opacity="0.75" marker-end="url(#{svg_id}-arrow)"/>')
    marker = (f'<defs><marker id="{svg_id}-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="6" '
              f'markerHeight="6" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="{COLOURS["move"]}"/></marker></defs>')
    body = marker + "".join(parts) + "".join(arrows)
    return svg(svg_id, width, total_h, body, f"tasks on {len(procs)} processes")


def _process_meta(p: ProcessNode) -> str:
    threads = "" if p.threads is None else f"{p.threads} thread{'s' if p.threads != 1 else ''} · "
    return f"{threads}{p.short or p.id[:8]}"


def _chip(x: float, y: float, w: float, task: TaskKey, role: str, p: ProcessNode, moved: bool) -> str:
    colour = COLOURS[role]
    fill, ink = (colour, "#fff") if role == "active" else ("#fff", colour)
    dash = "3,2" if role == "warmup" else ""
    ring = rect(x - 2, y - 2, w + 4, 20, stroke=COLOURS["move"], width=1.6, radius=4) if moved else ""
    what = {"active": "active", "standby": "standby", "warmup": "warm-up"}[role]
    tip = f"task {task_label(task)}: {what} on {p.label}" + (" (moved here)" if moved else "")
    return (f"<g {_task_attrs(task, role, p.id, moved)}>" + ring
            + rect(x, y, w, 16, fill=fill, stroke=colour, width=1.4, radius=3, dash=dash)
            + text(x + w / 2, y + 12, str(task[1]), FS - 1, anchor="middle", fill=ink) + title(tip) + "</g>")


# --------------------------------------------------------------------------------------------- compact


def _compact(view: TopologyView, svg_id: str) -> str:
    procs = ordered_processes(view)
    subs = subtopology_order(view.subtopologies)
    cells = _cells(view.shown)
    arrived, moves = _arrivals(view)
    label_w, summary_w = 170.0, 190.0
    col_w = float(max(14, min(48, int((PAGE_W - label_w - summary_w) // max(len(subs), 1)))))
    sq, sq_pitch = 6, 7
    per_line = max(1, int((col_w - 3) // sq_pitch))
    widest_id = max((text_width(s.id, 10) for s in subs), default=0.0)
    step = max(1, math.ceil((widest_id + 4) / col_w))
    x_sum = label_w + col_w * len(subs) + 8
    width = x_sum + summary_w
    parts: list[str] = []
    backs: list[str] = []
    y = 4.0
    parts.append(text(6, y + 12, "process", 10, fill="#666"))
    for j, s in enumerate(subs):
        if j % step == 0:
            parts.append(text(label_w + j * col_w + col_w / 2, y + 12, s.id, 10, anchor="middle", fill="#444",
                              tip=f"Sub-topology {s.id}"))
    parts.append(text(x_sum, y + 12, fit("active·standby·warm-up" + ("  +in/-out" if view.after is not None else ""),
                                   summary_w - 6, 9), 9, fill="#666"))
    y += 20
    outgoing: dict[str, int] = {}
    incoming: dict[str, int] = {}
    for m in moves:
        incoming[m.target] = incoming.get(m.target, 0) + 1
        if m.source is not None:
            outgoing[m.source] = outgoing.get(m.source, 0) + 1
    has_bands = any(p.band is not None for p in procs)
    for k, (band, idx) in enumerate(_bands(procs)):
        heights = []
        for i in idx:
            most = max((len(cells.get((s.id, procs[i].id), [])) for s in subs), default=0)
            heights.append(max(14.0, math.ceil(most / per_line) * sq_pitch + 4))
        band_h = sum(heights) + (16 if has_bands else 0)
        backs.append(rect(2, y, width - 4, band_h, fill=COLOURS[f"band{k % 2}"],
                          attrs=f' class="band" data-band="{escape(band or "")}"'))
        if has_bands:
            name = f"{view.band_kind} {band} ({len(idx)} processes)" if band is not None else \
                f"{view.band_kind} unknown ({len(idx)} processes)"
            parts.append(text(6, y + 12, fit(name, width - 12, 10), 10, weight="bold", fill="#444"))
            y += 16
        for i, h in zip(idx, heights, strict=True):
            p = procs[i]
            counts = {"active": 0, "standby": 0, "warmup": 0}
            parts.append(f'<g class="process" data-process="{escape(p.id)}">'
                         + text(6, y + 10, fit(p.label, label_w - 10, 10), 10, tip=f"{p.label} ({p.id})") + "</g>")
            for j, s in enumerate(subs):
                for n, (role, part) in enumerate(cells.get((s.id, p.id), [])):
                    counts[role] += 1
                    task = (s.id, part)
                    moved = (task, role, p.id) in arrived
                    x = label_w + j * col_w + 2 + (n % per_line) * sq_pitch
                    top = y + 2 + (n // per_line) * sq_pitch
                    colour = COLOURS[role]
                    stroke = f' stroke="{COLOURS["move"]}" stroke-width="1"' if moved else ""
                    parts.append(f'<rect {_task_attrs(task, role, p.id, moved)} x="{x:.1f}" y="{top:.1f}" '
                                 f'width="{sq}" height="{sq}" fill="{colour}"{stroke}>'
                                 f"{title(f'task {task_label(task)}: {role} on {p.label}')}</rect>")
            summary = f"{counts['active']}·{counts['standby']}·{counts['warmup']}"
            if view.after is not None:
                summary += f"  +{incoming.get(p.id, 0)}/-{outgoing.get(p.id, 0)}"
            parts.append(text(x_sum, y + 10, fit(summary, summary_w - 6, 10), 10, fill="#444"))
            y += h
    grid = "".join(f'<line x1="{label_w + j * col_w:.1f}" x2="{label_w + j * col_w:.1f}" y1="20" y2="{y:.1f}" '
                   f'stroke="#e2e2e2"/>' for j in range(len(subs) + 1))
    body = "".join(backs) + grid + "".join(parts)
    return svg(svg_id, width, y + 6, body, f"tasks on {len(procs)} processes (compact)")
