"""Staging and commit of pipeline outputs (no Spark): complete or previous, never partial."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from taskassign.errors import UserInputError
from taskassign.pipeline.output import MANIFEST_FILE, MANIFEST_FORMAT, OutputDirectory, read_manifest


def staged(output: Path, content: str) -> OutputDirectory:
    directory = OutputDirectory.prepare(output)
    Path(directory.table("errors")).mkdir()
    (Path(directory.table("errors")) / "part-0.parquet").write_text(content)
    return directory


def test_commit_swaps_in_a_complete_output(tmp_path: Path) -> None:
    output = tmp_path / "out"
    final, manifest = staged(output, "first").commit({"rows": {}})
    assert final == output.absolute()
    assert manifest["format"] == MANIFEST_FORMAT and manifest["complete"] is True
    assert read_manifest(output) == json.loads((output / MANIFEST_FILE).read_text())
    staged(output, "second").commit({"rows": {"x": 1}})
    assert (output / "errors" / "part-0.parquet").read_text() == "second"
    assert read_manifest(output)["rows"] == {"x": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_an_abandoned_run_leaves_the_previous_output(tmp_path: Path) -> None:
    output = tmp_path / "out"
    staged(output, "first").commit({})
    staged(output, "half-written").abandon()
    assert (output / "errors" / "part-0.parquet").read_text() == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_leftovers_of_a_crashed_run_are_cleaned_and_never_look_complete(tmp_path: Path) -> None:
    output = tmp_path / "out"
    crashed = staged(output, "partial")  # the process dies here: no commit, no abandon
    assert not output.exists()
    with pytest.raises(UserInputError, match="not a complete pipeline output"):
        read_manifest(output)
    staged(output, "next").commit({})
    assert not crashed.staging.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_foreign_directory_is_never_replaced(tmp_path: Path) -> None:
    foreign = tmp_path / "data"
    foreign.mkdir()
    (foreign / "keep.txt").write_text("mine")
    with pytest.raises(UserInputError, match="refusing to replace it"):
        OutputDirectory.prepare(foreign)
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserInputError, match="not a directory"):
        OutputDirectory.prepare(tmp_path / "file")


def test_an_output_under_a_file_is_an_input_error(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserInputError, match="is in the way"):
        OutputDirectory.prepare(tmp_path / "file" / "out")
    assert (tmp_path / "file").read_text() == "x"
