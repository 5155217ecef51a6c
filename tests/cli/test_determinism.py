"""Same scenario, same bytes: ``taskassign assign --json`` does not depend on Python's hash seed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import GOLDEN_DIR

SRC = Path(__file__).resolve().parents[2] / "src"
CASES = [GOLDEN_DIR / "high_availability" / f"{name}.scenario.json"
         for name in ("ha-055-t169-c5-r1-tags", "ha-075-t49-c17-r3-tags", "ha-066-t276-c7-r3")]


def assign_json(scenario: Path, hash_seed: str) -> bytes:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run([sys.executable, "-m", "taskassign", "assign", str(scenario), "--json"],
                          env=env, capture_output=True, check=True, timeout=120)
    return done.stdout


@pytest.mark.parametrize("scenario", CASES, ids=lambda p: p.name.removesuffix(".scenario.json"))
def test_output_is_byte_identical_under_different_hash_seeds(scenario: Path) -> None:
    outputs = {assign_json(scenario, seed) for seed in ("0", "1", "4242")}
    assert len(outputs) == 1
    assert b'"error": "NONE"' in outputs.pop()
