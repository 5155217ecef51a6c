"""Driving Debian's headless Chromium for the report tests: load a page, run a probe script once it has loaded
and read the probe's JSON back from the dumped DOM; take screenshots.

A probe is a ``<script>`` appended before ``</body>`` that writes its findings as JSON into ``<pre id="probe">``
(``--dump-dom`` prints the document after the scripts ran). ``BOXES`` is a ready-made probe: the bounding box of
every element a CSS selector picks (plus its ``data-*`` attributes and text), and how many pairs of visible text
labels inside each ``svg`` overlap, so a test reads positions back instead of trusting the layout code.
"""

from __future__ import annotations

import io
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

CHROMIUM = "/usr/bin/chromium"

#: Marks for a module of browser tests: the ``browser`` marker, skipped without Chromium.
BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(shutil.which(CHROMIUM) is None,
                       reason=f"{CHROMIUM} is not installed (Debian package 'chromium'; .ci/run installs it)"),
]

#: The overlap test the probes share: two boxes overlap when they share more than a pixel each way.
OVERLAPS_JS = """
const overlapping = (boxes) => {
  const pairs = [];
  const sorted = boxes.map((b, i) => [b, i]).sort((p, q) => p[0].left - q[0].left);
  for (let i = 0; i < sorted.length; i++) {
    const a = sorted[i][0];
    for (let j = i + 1; j < sorted.length && sorted[j][0].left < a.right - 1; j++) {
      const b = sorted[j][0];
      if (Math.min(a.right, b.right) - Math.max(a.left, b.left) > 1 &&
          Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 1) pairs.push([sorted[i][1], sorted[j][1]]);
    }
  }
  return pairs;
};
"""

#: With ``/*SELECTORS*/`` replaced by a JSON list of CSS selectors (``boxes_script``): for each selector, every
#: element it picks as {box, id, data, text}; for every ``svg`` with an id, its size, its visible labels (``text`` with
#: content) and the pairs of them that overlap.
BOXES = """<script>
window.addEventListener("load", () => {
  /*OVERLAPS*/
  const selectors = /*SELECTORS*/;
  const box = (e) => { const r = e.getBoundingClientRect();
    return {left: r.left + scrollX, top: r.top + scrollY, right: r.right + scrollX, bottom: r.bottom + scrollY}; };
  const found = {};
  for (const s of selectors) found[s] = Array.from(document.querySelectorAll(s)).map(e => (
    {box: box(e), id: e.id, data: Object.assign({}, e.dataset), text: e.textContent.trim().slice(0, 80)}));
  const svgs = Array.from(document.querySelectorAll("svg[id]")).map(svg => {
    const texts = Array.from(svg.querySelectorAll("text")).filter(t => t.textContent.trim());
    const boxes = texts.map(box);
    const pairs = overlapping(boxes).slice(0, 20).map(([i, j]) => [texts[i].textContent, texts[j].textContent]);
    const b = box(svg);
    return {id: svg.id, width: b.right - b.left, height: b.bottom - b.top, labels: texts.length, overlaps: pairs};
  });
  const probe = document.createElement("pre");
  probe.id = "probe";
  probe.textContent = JSON.stringify({found, svgs});
  document.body.appendChild(probe);
});
</script>""".replace("/*OVERLAPS*/", OVERLAPS_JS)


def boxes_script(selectors: list[str]) -> str:
    """``BOXES`` for ``selectors``."""
    return BOXES.replace("/*SELECTORS*/", json.dumps(selectors))


def chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    """Run headless Chromium once with a throw-away profile (no network chatter, a fixed virtual time budget)."""
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", "--hide-scrollbars",
               f"--user-data-dir={profile}", "--virtual-time-budget=10000", *args]
    return subprocess.run(command, capture_output=True, timeout=180, check=True)


def probe(page: Path, tmp_path: Path, script: str, *, width: int = 1200, height: int = 1400) -> dict[str, Any]:
    """Load ``page`` with ``script`` appended and return the JSON the script left in ``<pre id="probe">``."""
    probed = tmp_path / f"probe-{page.stem}.html"
    probed.write_text(page.read_text(encoding="utf-8").replace("</body>", script + "</body>"), encoding="utf-8")
    dom = chromium(tmp_path / "profile-dom", f"--window-size={width},{height}", "--dump-dom",
                   probed.as_uri()).stdout.decode("utf-8")
    found = re.search(r'<pre id="probe">([^<]*)</pre>', dom)
    assert found is not None, dom[-500:]
    text = found.group(1).replace("&quot;", '"').replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    result: dict[str, Any] = json.loads(text)
    return result


def boxes(page: Path, tmp_path: Path, selectors: list[str], *, width: int = 1200) -> dict[str, Any]:
    """``BOXES`` run on ``page``: ``{"found": {selector: [...]}, "svgs": [...]}``."""
    return probe(page, tmp_path, boxes_script(selectors), width=width)


def screenshot_png(page: Path, tmp_path: Path, *, width: int = 1200, height: int = 1400) -> bytes:
    """The first ``width`` x ``height`` pixels of ``page`` as Chromium paints them, as PNG bytes."""
    shot = tmp_path / f"shot-{page.stem}.png"
    chromium(tmp_path / "profile-shot", f"--window-size={width},{height}", f"--screenshot={shot}", page.as_uri())
    return shot.read_bytes()


def screenshot(page: Path, tmp_path: Path, height: int, *, width: int = 1200) -> np.ndarray:
    """The screenshot as an RGB array (rows, columns, 3)."""
    png = screenshot_png(page, tmp_path, width=width, height=height)
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGB"), dtype=int)


def share(pixels: np.ndarray, rgb: tuple[int, int, int]) -> float:
    """The share of pixels within 16 of ``rgb`` on every channel."""
    return float((np.abs(pixels - np.array(rgb)) < 16).all(axis=2).mean())
