"""Printing and saving a benchmark's result document (benchmarks/results/<name>.json)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

RESULTS_DIR = Path(__file__).parent / "results"


def load_average() -> list[float]:
    """1, 5 and 15 minute load averages: how busy the (shared) machine was."""
    return [round(x, 2) for x in os.getloadavg()]


def report(name: str, result: dict[str, Any], *, write: bool) -> None:
    """Print ``result`` as JSON and, with ``write``, save it as results/<name>.json."""
    text = json.dumps(result, indent=2) + "\n"
    print(text, end="")
    if write:
        (RESULTS_DIR / f"{name}.json").write_text(text)
