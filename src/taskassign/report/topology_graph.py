"""The topology as a diagram: one row per subtopology (upstream first), its input topics on the left, the
subtopology with its stores and changelogs in the middle, what it writes on the right; co-partitioned inputs
bracketed; a repartition topic's edge runs from the writing subtopology's output, round the right margin,
through the gap above the reading subtopology's row and in at its input, so edges never cross a label.

Deterministic: the order is the subtopologies' depth along repartition topics, then their id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from taskassign.report.topology_model import SubtopologyNode
from taskassign.report.topology_svg import COLOURS, fit, rect, svg, text, title

__all__ = ("MAX_EDGES", "MAX_ITEMS", "graph_svg", "subtopology_order")

FS = 11
CHIP_H, CHIP_PITCH, LINE = 18, 22, 15
IN_W, SUB_W, OUT_W, GAP = 290, 270, 290, 34
#: Topics or stores listed per column before "+N more".
MAX_ITEMS = 6
#: Repartition edges drawn; past this, the topics' kinds and names say where they go.
MAX_EDGES = 40
LANE = 5
#: Past this many sub-topologies, boxes take fewer lines (``_box_lines``).
DENSE_FROM = 12


def _id_key(sid: str) -> tuple[int, int, str]:
    return (0, int(sid), "") if sid.isdigit() else (1, 0, sid)


def subtopology_order(subs: Sequence[SubtopologyNode]) -> list[SubtopologyNode]:
    """Upstream first: depth along repartition topics (writer before reader; a cycle is cut), then id."""
    writers: dict[str, list[str]] = {}
    for s in subs:
        for t in s.repartition_sinks:
            writers.setdefault(t, []).append(s.id)
    depth: dict[str, int] = {}
    by_id = {s.id: s for s in subs}

    def visit(sid: str, stack: frozenset[str]) -> int:
        if sid in depth:
            return depth[sid]
        ups = [w for t in by_id[sid].source_topics for w in writers.get(t, ()) if w not in stack and w != sid]
        d = 1 + max((visit(w, stack | {sid}) for w in sorted(ups, key=_id_key)), default=-1)
        depth[sid] = d
        return d

    for s in sorted(subs, key=lambda s: _id_key(s.id)):
        visit(s.id, frozenset())
    return sorted(subs, key=lambda s: (depth[s.id], _id_key(s.id)))


@dataclass(frozen=True)
class _Row:
    sub: SubtopologyNode
    top: float
    height: float
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    hidden_in: tuple[str, ...]
    hidden_out: tuple[str, ...]
    lines: tuple[tuple[str, str], ...]  # (kind, text) in the subtopology box

    def input_y(self, topic: str) -> float | None:
        return self.top + self.inputs.index(topic) * CHIP_PITCH + CHIP_H / 2 if topic in self.inputs else None

    def output_y(self, topic: str) -> float | None:
        return self.top + self.outputs.index(topic) * CHIP_PITCH + CHIP_H / 2 if topic in self.outputs else None


def _capped(items: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    if len(items) <= MAX_ITEMS:
        return tuple(items), ()
    return tuple(items[:MAX_ITEMS - 1]), tuple(items[MAX_ITEMS - 1:])


def _box_lines(s: SubtopologyNode, dense: bool) -> tuple[tuple[str, str], ...]:
    """The lines of a sub-topology's box. ``dense`` (many sub-topologies): the title and counts on one line, and
    a store's changelog (``<application.id>-<store>-changelog``) drawn as a mark on the store's line."""
    state = "stateful" if s.stateful or s.stores else "stateless"
    if not dense:
        lines = [("title", f"Sub-topology {s.id}"), ("meta", f"{len(s.partitions)} tasks · {state}")]
        items = [("store", f"store {n}") for n in s.stores]
        items += [("changelog", f"changelog {n}") for n in s.changelog_topics]
    else:
        lines = [("title", f"Sub-topology {s.id} · {len(s.partitions)} tasks · {state}")]
        items, used = [], set()
        for n in s.stores:
            log = next((c for c in s.changelog_topics if c.endswith(f"-{n}-changelog") and c not in used), None)
            if log is None:
                items.append(("store", f"store {n}"))
            else:
                used.add(log)
                items.append(("store+changelog", f"store {n}\t{log}"))
        items += [("changelog", f"changelog {n}") for n in s.changelog_topics if n not in used]
    if len(items) > MAX_ITEMS:
        rest = items[MAX_ITEMS - 1:]
        more = ", ".join(t.replace("\t", " -> ") for _, t in rest)
        items = [*items[:MAX_ITEMS - 1], ("more", f"+{len(rest)} more: {more}")]
    return tuple(lines + items)


def _links(rows: Sequence[_Row]) -> list[tuple[_Row, str, _Row]]:
    """(writer row, topic, reader row) of every repartition topic both ends of which are drawn."""
    result: list[tuple[_Row, str, _Row]] = []
    for a in rows:
        for t in a.sub.repartition_sinks:
            if t not in a.outputs:
                continue
            result.extend((a, t, b) for b in rows if b is not a and t in b.inputs)
    return result[:MAX_EDGES]


def _chip(x: float, y: float, w: float, name: str, kind: str, shown: str | None = None) -> str:
    label = fit(shown or name, w - 10, FS)
    return (f'<g class="topo-node" data-node="topic" data-kind="{kind}" data-name="{escape(name)}">'
            + rect(x, y, w, CHIP_H, fill=COLOURS[kind], stroke="#999", radius=3)
            + text(x + 5, y + 13, label, FS, tip=name) + title(f"{kind} topic {name}") + "</g>")


def graph_svg(subs: Sequence[SubtopologyNode], *, svg_id: str = "topology-graph") -> str:
    """The topology diagram of ``subs``."""
    ordered = subtopology_order(subs)
    dense = len(subs) > DENSE_FROM
    # first pass: row heights; the gap above a row grows with the edges that run through it
    pre = []
    for s in ordered:
        ins, hidden_in = _capped([*s.source_topics])
        outs, hidden_out = _capped([*s.sink_topics])
        lines = _box_lines(s, dense)
        n_in, n_out = len(ins) + bool(hidden_in), len(outs) + bool(hidden_out)
        height = max(n_in * CHIP_PITCH - 4, n_out * CHIP_PITCH - 4, len(lines) * LINE + 8, CHIP_H)
        pre.append((s, ins, outs, hidden_in, hidden_out, lines, height))
    probe_rows = [_Row(s, 0, h, i, o, hi, ho, ln) for s, i, o, hi, ho, ln, h in pre]
    links = _links(probe_rows)
    into = {id(r.sub): 0 for r in probe_rows}
    for _, _, b in links:
        into[id(b.sub)] += 1
    left = 16 + LANE * len(links)
    x_in, x_sub = left, left + IN_W + GAP
    x_out = x_sub + SUB_W + GAP
    x_lanes = x_out + OUT_W + 10
    width = x_lanes + LANE * len(links) + 12
    rows: list[_Row] = []
    y = 12.0
    for (s, ins, outs, hidden_in, hidden_out, lines, height) in pre:
        y += 4 + 4 * into[id(s)]
        rows.append(_Row(s, y, height, ins, outs, hidden_in, hidden_out, lines))
        y += height + 10
    links = _links(rows)
    parts: list[str] = []
    edges: list[str] = []
    for r in rows:
        parts.append(_row(r, x_in, x_sub, x_out, edges))
    # repartition edges
    entering: dict[int, int] = {}
    for k, (a, t, b) in enumerate(links):
        ya, yb = a.output_y(t), b.input_y(t)
        assert ya is not None and yb is not None
        slot = entering.get(id(b.sub), 0)
        entering[id(b.sub)] = slot + 1
        yc = b.top - 6 - 4 * slot
        xr, xl = x_lanes + LANE * k + 3, left - 8 - LANE * k
        edges.append(f'<path class="topo-edge" data-from="{escape(a.sub.id)}" data-to="{escape(b.sub.id)}" '
                     f'd="M{x_out + OUT_W:.1f},{ya:.1f} H{xr:.1f} V{yc:.1f} H{xl:.1f} V{yb:.1f} H{x_in - 1:.1f}" '
                     f'fill="none" stroke="{COLOURS["edge"]}" stroke-width="1.2" marker-end="url(#{svg_id}-arrow)">'
                     f"{title(f'{t}: sub-topology {a.sub.id} -> {b.sub.id}')}</path>")
    marker = (f'<defs><marker id="{svg_id}-arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" '
              f'markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="{COLOURS["edge"]}"/></marker></defs>')
    body = marker + "".join(edges) + "".join(parts)
    return svg(svg_id, width, y + 4, body, f"topology: {len(subs)} sub-topologies")


def _row(r: _Row, x_in: float, x_sub: float, x_out: float, edges: list[str]) -> str:
    s = r.sub
    out = [f'<g class="topo-row" data-sub="{escape(s.id)}">']
    box_h = len(r.lines) * LINE + 8
    mid = r.top + min(box_h, r.height) / 2
    for i, t in enumerate(r.inputs):
        cy = r.top + i * CHIP_PITCH
        out.append(_chip(x_in, cy, IN_W, t, "repartition" if t in s.repartition_sources else "source"))
        edges.append(f'<line x1="{x_in + IN_W:.1f}" y1="{cy + CHIP_H / 2:.1f}" x2="{x_sub:.1f}" y2="{mid:.1f}" '
                     f'stroke="{COLOURS["edge"]}"/>')
    if r.hidden_in:
        cy = r.top + len(r.inputs) * CHIP_PITCH
        out.append(_more(x_in, cy, IN_W, r.hidden_in, "inputs"))
    for i, t in enumerate(r.outputs):
        cy = r.top + i * CHIP_PITCH
        out.append(_chip(x_out, cy, OUT_W, t, "repartition" if t in s.repartition_sinks else "sink"))
        edges.append(f'<line x1="{x_sub + SUB_W:.1f}" y1="{mid:.1f}" x2="{x_out:.1f}" y2="{cy + CHIP_H / 2:.1f}" '
                     f'stroke="{COLOURS["edge"]}"/>')
    if r.hidden_out:
        out.append(_more(x_out, r.top + len(r.outputs) * CHIP_PITCH, OUT_W, r.hidden_out, "outputs"))
    for group in s.copartition_groups:
        ys = [y for t in group if (y := r.input_y(t)) is not None]
        if len(ys) >= 2:
            top, bottom = min(ys) - CHIP_H / 2 + 2, max(ys) + CHIP_H / 2 - 2
            out.append(f'<path class="topo-node" data-node="copartition" data-name="{escape(",".join(group))}" '
                       f'd="M{x_in - 2:.1f},{top:.1f} h-5 V{bottom:.1f} h5" fill="none" stroke="#7b3294" '
                       f'stroke-width="2">{title("co-partitioned: " + ", ".join(group))}</path>')
    out.append(f'<g class="topo-node" data-node="subtopology" data-id="{escape(s.id)}">'
               + rect(x_sub, r.top, SUB_W, box_h, fill=COLOURS["subtopology"], stroke="#555", radius=4) + "</g>")
    for i, (kind, line) in enumerate(r.lines):
        base = r.top + 4 + (i + 1) * LINE - 4
        if kind == "store+changelog":
            line, log = line.split("\t")
            name = line.split(" ", 1)[1]
            out.append(f'<g class="topo-node" data-node="store" data-name="{escape(name)}">'
                       + rect(x_sub + 8, base - 8, 8, 8, fill="#ddd", stroke="#555")
                       + text(x_sub + 34, base, fit(line, SUB_W - 42, FS - 1), FS - 1, fill="#555", tip=line) + "</g>")
            out.append(f'<g class="topo-node" data-node="changelog" data-name="{escape(log)}">'
                       + rect(x_sub + 20, base - 8, 8, 8, fill=COLOURS["changelog"], stroke="#2a7d2a")
                       + title(f"changelog {log}") + "</g>")
        elif kind in ("store", "changelog"):
            name = line.split(" ", 1)[1]
            colour = "#555" if kind == "store" else "#2a7d2a"
            out.append(f'<g class="topo-node" data-node="{kind}" data-name="{escape(name)}">'
                       + rect(x_sub + 8, base - 8, 8, 8, fill=COLOURS["changelog"] if kind == "changelog" else "#ddd",
                              stroke=colour)
                       + text(x_sub + 22, base, fit(line, SUB_W - 30, FS - 1), FS - 1, fill=colour, tip=line) + "</g>")
        else:
            out.append(text(x_sub + 8, base, fit(line, SUB_W - 16, FS), FS,
                            weight="bold" if kind == "title" else "normal",
                            fill="#222" if kind == "title" else "#555", tip=line))
    out.append("</g>")
    return "".join(out)


def _more(x: float, y: float, w: float, hidden: Sequence[str], what: str) -> str:
    label = fit(f"+{len(hidden)} more {what}", w - 10, FS)
    return ('<g class="topo-more">' + rect(x, y, w, CHIP_H, fill="#fff", stroke="#bbb", dash="3,2", radius=3)
            + text(x + 5, y + 13, label, FS, fill="#555") + title(", ".join(hidden)) + "</g>")
