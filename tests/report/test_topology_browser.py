"""The topology page in headless Chromium: positions are read back from the DOM, not trusted from the layout
code. On every shipped example (group file, scenarios, streams group), the groups captured from a real Kafka
and generated applications from 1 sub-topology on 2 processes to 50 on 200 (the compact view): no two labels
overlap, every task copy of the
drawn assignment is there exactly once with a visible box inside its diagram, no two task copies cover each
other, and every sub-topology, topic, store and changelog is a node. The screenshots under docs/images are
these pages (TASKASSIGN_UPDATE_SCREENSHOTS=1 rewrites them)."""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from taskassign.report.page import page
from taskassign.report.topology_graph import MAX_ITEMS
from taskassign.report.topology_model import TopologyView
from taskassign.report.topology_page import build_topology_report, read_topology_view, topology_section
from tests.helpers import EXAMPLES_DIR
from tests.report.browser import BROWSER_MARKS, boxes, screenshot_png, share
from tests.report.test_topology import EXAMPLES, LIVE_CASES, expected_copies, view_of
from tests.report.topology_cases import large_scenario

pytestmark = BROWSER_MARKS
DOCS = Path(__file__).parents[2] / "docs"
IMAGES = DOCS / "images"
GENERATED = {"generated-1x2": (1, 2), "generated-6x12": (6, 12), "generated-50x8": (50, 8),
             "generated-50x200": (50, 200)}
CASES = [p.name.removesuffix(".json") for p in EXAMPLES + LIVE_CASES] + list(GENERATED)
assert len(set(CASES)) == len(CASES)
#: The screenshots docs/report.md shows: (file, case, with the topology diagram).
SCREENSHOTS = (("topology-group.png", "orders-app.group", True),
               ("topology-streams-group.png", "two-racks-one-standby.streams-group", True),
               ("topology-scenario.png", "rack-traffic.scenario", True),
               ("topology-compact-50x200.png", "generated-50x200", False))
SELECTORS = ["[data-task]", ".topo-node", "svg[id]", "body"]


def _view(case: str) -> TopologyView:
    if case in GENERATED:
        return read_topology_view(f"{case}.json", "scenario", large_scenario(*GENERATED[case]))
    return view_of(next(p for p in EXAMPLES + LIVE_CASES if p.name.removesuffix(".json") == case))


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, TopologyView]]:
    out = tmp_path_factory.mktemp("topology-pages")
    result = {}
    for case in CASES:
        view = _view(case)
        path = out / f"{case}.html"
        path.write_text(build_topology_report(view, f"{case}.json"), encoding="utf-8")
        result[case] = (path, view)
    return result


def _overlapping(items: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Pairs of boxes that share more than a pixel each way."""
    found = []
    ordered = sorted(items, key=lambda e: e["box"]["left"])
    for i, a in enumerate(ordered):
        for b in ordered[i + 1:]:
            if b["box"]["left"] >= a["box"]["right"] - 1:
                break
            if min(a["box"]["bottom"], b["box"]["bottom"]) - max(a["box"]["top"], b["box"]["top"]) > 1:
                found.append((a["data"].get("task", ""), b["data"].get("task", "")))
    return found


def _expected_nodes(view: TopologyView) -> set[tuple[str, str]]:
    nodes = set()
    for s in view.subtopologies:
        nodes.add(("subtopology", s.id))
        for topics in (s.source_topics, s.sink_topics):
            shown = topics if len(topics) <= MAX_ITEMS else topics[:MAX_ITEMS - 1]
            nodes.update(("topic", t) for t in shown)
        items = [("store", n) for n in s.stores] + [("changelog", n) for n in s.changelog_topics]
        nodes.update(items if len(items) <= MAX_ITEMS else items[:MAX_ITEMS - 1])
    return nodes


@pytest.mark.parametrize("case", CASES)
def test_labels_apart_and_every_task_and_node_present(case: str, rendered: dict[str, tuple[Path, TopologyView]],
                                                       tmp_path: Path) -> None:
    path, view = rendered[case]
    found = boxes(path, tmp_path, SELECTORS)
    svgs = {s["id"]: s for s in found["svgs"]}
    assert {"topology-graph", "topology-placement"} <= set(svgs)
    for svg in svgs.values():
        assert svg["labels"] > 0 and svg["overlaps"] == [], svg  # no label on top of another
    copies = [e for e in found["found"]["[data-task]"] if "role" in e["data"]]
    drawn = sorted((e["data"]["task"], e["data"]["role"], e["data"]["process"]) for e in copies)
    assert drawn == [tuple(c) for c in expected_copies(view)]
    frame = next(e["box"] for e in found["found"]["svg[id]"] if e["id"] == "topology-placement")
    for e in copies:
        b = e["box"]
        assert b["right"] - b["left"] >= 5 and b["bottom"] - b["top"] >= 5, e  # a visible mark
        assert frame["left"] <= b["left"] and b["right"] <= frame["right"] + 0.5, e
        assert frame["top"] <= b["top"] and b["bottom"] <= frame["bottom"] + 0.5, e
    assert _overlapping(copies) == []  # no task copy hides another
    nodes = {(e["data"]["node"], e["data"].get("id") or e["data"].get("name", ""))
             for e in found["found"][".topo-node"]}
    assert _expected_nodes(view) <= nodes
    assert len(found["found"]["body"]) == 1


def _shot(case: str, rendered: dict[str, tuple[Path, TopologyView]], graph: bool, tmp_path: Path) -> Image.Image:
    path, view = rendered[case]
    if not graph:  # the compact placement alone: the part worth a picture at this size
        path = tmp_path / f"{case}-placement.html"
        path.write_text(page(f"taskassign topology: {view.name}", "scenario",
                             topology_section(view, graph=False, heading="Tasks on processes")), encoding="utf-8")
    height = int(boxes(path, tmp_path, ["body"])["found"]["body"][0]["box"]["bottom"]) + 40
    png = screenshot_png(path, tmp_path, width=1200, height=min(height, 1500))
    return Image.open(io.BytesIO(png)).convert("RGB")


def test_screenshots_of_the_shipped_examples(rendered: dict[str, tuple[Path, TopologyView]], tmp_path: Path) -> None:
    """The pictures docs/report.md shows are these pages; each screenshot shows actives (blue) and is not blank.
    With TASKASSIGN_UPDATE_SCREENSHOTS=1 the files under docs/images are rewritten (128 colours, a few tens of KB)."""
    update = os.environ.get("TASKASSIGN_UPDATE_SCREENSHOTS") == "1"
    docs = (DOCS / "report.md").read_text(encoding="utf-8")
    for name, case, graph in SCREENSHOTS:
        image = _shot(case, rendered, graph, tmp_path)
        pixels = np.asarray(image, dtype=int)
        assert pixels.std() > 20 and share(pixels, (0x1F, 0x77, 0xB4)) > 0.0005, name
        if update:
            IMAGES.mkdir(exist_ok=True)
            image.quantize(colors=128, method=Image.Quantize.FASTOCTREE).save(IMAGES / name, optimize=True)
        assert f"images/{name}" in docs, f"docs/report.md does not show {name}"
        assert (IMAGES / name).read_bytes().startswith(b"\x89PNG")
    assert sum((IMAGES / name).stat().st_size for name, _, _ in SCREENSHOTS) < 600_000


def test_the_simulation_and_compare_pages_draw_their_sections(report_path: Path, compare_report_path: Path,
                                                              tmp_path: Path) -> None:
    for path, ids in ((report_path, {"topology-graph", "topology-placement"}),
                      (compare_report_path, {"topology-0-graph", "topology-0-placement", "topology-1-placement"})):
        found = boxes(path, tmp_path, ["[data-role]"])
        svgs = {s["id"]: s for s in found["svgs"]}
        assert ids <= set(svgs), path
        for i in ids:
            assert svgs[i]["overlaps"] == [] and svgs[i]["width"] > 300, svgs[i]
        assert len(found["found"]["[data-role]"]) >= 8


def test_examples_exist() -> None:
    assert (EXAMPLES_DIR / "groups" / "orders-app.group.json").is_file() and len(EXAMPLES) >= 6
