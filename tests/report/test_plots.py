from __future__ import annotations

import base64
import io
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from taskassign.report import plots, read_simulation, timeline
from taskassign.report.data import ClientLoad

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _image(png: bytes) -> Image.Image:
    assert png.startswith(PNG_MAGIC)
    return Image.open(io.BytesIO(png)).convert("RGB")


def _colour_share(png: bytes, rgb: tuple[int, int, int]) -> float:
    image = _image(png)
    pixels = np.asarray(image, dtype=int)
    close = (np.abs(pixels - np.array(rgb)) <= 12).all(axis=2)
    return float(close.mean())


ACTIVE_RGB = (0x1F, 0x77, 0xB4)


def test_every_plot_draws_something(report_path: Path) -> None:
    html = report_path.read_text(encoding="utf-8")
    for encoded in re.findall(r'src="data:image/png;base64,([^"]+)"', html):
        image = _image(base64.b64decode(encoded))
        assert image.width >= 400 and image.height >= 250
        rgb = np.asarray(image, dtype=np.int64)
        colours = np.unique((rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2])
        assert len(colours) > 20  # more than a blank canvas and a frame


def test_bars_reflect_the_data() -> None:
    light = [ClientLoad("a" * 36, None, 1, 1, 0, 0, (1,), (1,))]
    heavy = [ClientLoad("a" * 36, None, 1, 9, 0, 0, (9,), (9,)), ClientLoad("b" * 36, None, 1, 1, 0, 0, (1,), (1,))]
    heavy_png, light_png = plots.client_load_png(heavy), plots.client_load_png(light)
    assert heavy_png != light_png and _colour_share(light_png, ACTIVE_RGB) > 0
    # the left panel's two bars: 9 and 1 active tasks per thread, so heights in the ratio 9:1
    pixels = np.asarray(_image(heavy_png), dtype=int)
    left = pixels[:, : pixels.shape[1] * 55 // 100]
    blue_per_column = (np.abs(left - np.array(ACTIVE_RGB)) <= 12).all(axis=2).sum(axis=0)
    widths = Counter(int(h) for h in blue_per_column if h)
    bars = sorted(h for h, _ in widths.most_common(2))  # the two bars are the widest runs of equal height
    assert 8.5 <= bars[1] / bars[0] <= 9.5


def test_same_data_same_bytes(simulation_dir: Path) -> None:
    data = read_simulation(simulation_dir)
    assert timeline.movements_svg(data.rebalances) == timeline.movements_svg(data.rebalances)
    assert plots.client_load_png(data.clients) == plots.client_load_png(data.clients)


@pytest.mark.parametrize("cells", [[], [("r1", "r1", 2.0), ("r1", "r2", 0.5), ("?", "r2", 1.0)]])
def test_rack_matrix_with_and_without_traffic(cells: list[tuple[str, str, float]]) -> None:
    assert _image(plots.rack_traffic_png(cells)).width > 300
