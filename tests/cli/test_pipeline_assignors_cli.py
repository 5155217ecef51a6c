"""``pipeline run --assignor A,B``: a list that cannot run is refused (exit 2) before Spark starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from taskassign.cli import app

runner = CliRunner()


@pytest.mark.parametrize(("value", "message"), [
    ("high_availability,high_availability", "names an assignor twice"),
    ("high_availability,", "an empty name"),
    ("high_availability,no_such_assignor", "no_such_assignor"),
])
def test_a_bad_assignor_list_exits_2(tmp_path: Path, value: str, message: str) -> None:
    result = runner.invoke(app, ["pipeline", "run", "--input", str(tmp_path), "--output", str(tmp_path / "out"),
                                 "--assignor", value])
    assert result.exit_code == 2
    assert message in " ".join(result.output.split())
    assert not (tmp_path / "out").exists()
