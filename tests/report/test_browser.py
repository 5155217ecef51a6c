"""The report in a real browser: Debian's headless Chromium must load and show every plot."""

from __future__ import annotations

import io
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

CHROMIUM = "/usr/bin/chromium"
pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(shutil.which(CHROMIUM) is None,
                       reason=f"{CHROMIUM} is not installed (Debian package 'chromium'; .ci/run installs it)"),
]
PROBE = ('<script>window.addEventListener("load", () => { document.title = "images:" + '
         'Array.from(document.images).map(i => i.complete ? i.naturalWidth + "x" + i.naturalHeight : "broken")'
         '.join(","); });</script>')


def _chromium(profile: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
               "--virtual-time-budget=10000", *args]
    return subprocess.run(command, capture_output=True, timeout=120, check=True)


def test_chromium_shows_every_plot(report_path: Path, tmp_path: Path) -> None:
    probe = tmp_path / "probe.html"
    probe.write_text(report_path.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    dom = _chromium(tmp_path / "profile-dom", "--dump-dom", probe.as_uri()).stdout.decode("utf-8")
    title = re.search(r"<title>([^<]*)</title>", dom)
    assert title is not None and title.group(1).startswith("images:"), dom[:500]
    sizes = title.group(1).removeprefix("images:").split(",")
    assert len(sizes) == 4
    for size in sizes:
        width, height = (int(v) for v in size.split("x"))
        assert width >= 400 and height >= 250


def test_the_screenshot_shows_the_plots(report_path: Path, tmp_path: Path) -> None:
    shot = tmp_path / "shot.png"
    _chromium(tmp_path / "profile-shot", "--window-size=1200,1400", f"--screenshot={shot}", report_path.as_uri())
    image = Image.open(io.BytesIO(shot.read_bytes())).convert("RGB")
    pixels = np.asarray(image, dtype=int)
    # the active bars' blue covers a visible part of the first screen; a page with broken images has none
    blue = (np.abs(pixels - np.array([0x1F, 0x77, 0xB4])) < 16).all(axis=2)
    assert blue.mean() > 0.002
