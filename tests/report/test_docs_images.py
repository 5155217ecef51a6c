"""The screenshots docs/report.md shows: there, referenced, small (tests/report/screenshots.py rewrites them)."""

from __future__ import annotations

import re
from pathlib import Path

from PIL import Image

from tests.report.screenshots import IMAGES, SHOTS
from tests.report.test_topology_browser import SCREENSHOTS as TOPOLOGY_SCREENSHOTS

REPORT_DOC = Path(__file__).resolve().parents[2] / "docs" / "report.md"


def test_every_screenshot_is_referenced_and_small() -> None:
    referenced = set(re.findall(r"\]\(images/([a-z0-9-]+\.png)\)", REPORT_DOC.read_text(encoding="utf-8")))
    assert referenced == set(SHOTS) | {name for name, *_ in TOPOLOGY_SCREENSHOTS}
    for name, height in SHOTS.items():
        path = IMAGES / name
        assert path.stat().st_size < 200 * 1024, name
        with Image.open(path) as image:
            assert image.size == (1200, height), name
            assert len(image.getcolors(256) or ()) > 8, name  # a page, not a blank
