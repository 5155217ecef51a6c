"""The default run's progress: a heartbeat inside a long test and the slowest files at the end."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(tmp_path: Path, heartbeat: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_long.py").write_text(
        "import time\n\ndef test_long():\n    time.sleep(2.5)\n\ndef test_short():\n    pass\n", encoding="utf-8"
    )
    env = {**os.environ, "TASKASSIGN_TEST_HEARTBEAT": heartbeat, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "tests.progress", "-p", "no:cacheprovider", "--rootdir", str(tmp_path),
         "-c", os.devnull, str(tmp_path / "test_long.py")],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )


def test_a_long_test_shows_a_heartbeat_and_the_slowest_files_are_listed(tmp_path: Path) -> None:
    result = _run(tmp_path, "1")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "... still running test_long.py::test_long (" in result.stdout
    summary = result.stdout.split("slowest test files", 1)[1]
    assert "2 tests  test_long.py" in summary


def test_heartbeat_zero_turns_it_off_and_a_bad_value_is_a_usage_error(tmp_path: Path) -> None:
    quiet = _run(tmp_path, "0")
    assert quiet.returncode == 0, quiet.stdout + quiet.stderr
    assert "still running" not in quiet.stdout
    bad = _run(tmp_path, "soon")
    assert bad.returncode == 4
    assert "TASKASSIGN_TEST_HEARTBEAT='soon'" in bad.stderr
