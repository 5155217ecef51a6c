"""docs/assignors.md's "Test your assignor" pytest example runs as written (from the repository root)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_pytest_example_passes(monkeypatch: pytest.MonkeyPatch) -> None:
    guide = (ROOT / "docs" / "assignors.md").read_text(encoding="utf-8")
    section = guide[guide.index("## Test your assignor"):]
    [example] = re.findall(r"```python\n(.*?)```", section, re.DOTALL)
    monkeypatch.chdir(ROOT)
    namespace: dict[str, object] = {}
    exec(compile(example, "docs/assignors.md", "exec"), namespace)
    tests = [f for name, f in namespace.items() if name.startswith("test_") and callable(f)]
    assert len(tests) == 1
    tests[0]()
    assert os.getcwd() == str(ROOT)
