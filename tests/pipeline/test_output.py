"""Staging and commit of pipeline outputs (no Spark): complete or previous, never partial."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from taskassign.errors import UserInputError
from taskassign.pipeline.output import (
    MANIFEST_FILE,
    MANIFEST_FORMAT,
    STAGING_MARKER,
    OutputDirectory,
    read_manifest,
)

#: What a run's manifest says it wrote (a pipeline output holds nothing else).
OUTPUTS = {"outputs": {"errors": {"path": "errors", "rows": 1}}}


def staged(output: Path, content: str) -> OutputDirectory:
    directory = OutputDirectory.prepare(output)
    Path(directory.table("errors")).mkdir()
    (Path(directory.table("errors")) / "part-0.parquet").write_text(content)
    return directory


def test_commit_swaps_in_a_complete_output(tmp_path: Path) -> None:
    output = tmp_path / "out"
    final, manifest = staged(output, "first").commit({"rows": {}, **OUTPUTS})
    assert final == output.absolute()
    assert manifest["format"] == MANIFEST_FORMAT and manifest["complete"] is True
    assert read_manifest(output) == json.loads((output / MANIFEST_FILE).read_text())
    staged(output, "second").commit({"rows": {"x": 1}, **OUTPUTS})
    assert (output / "errors" / "part-0.parquet").read_text() == "second"
    assert read_manifest(output)["rows"] == {"x": 1}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_an_abandoned_run_leaves_the_previous_output(tmp_path: Path) -> None:
    output = tmp_path / "out"
    staged(output, "first").commit(OUTPUTS)
    staged(output, "half-written").abandon()
    assert (output / "errors" / "part-0.parquet").read_text() == "first"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_leftovers_of_a_crashed_run_are_cleaned_and_never_look_complete(tmp_path: Path) -> None:
    output = tmp_path / "out"
    crashed = staged(output, "partial")
    crashed.release()  # the process dies here: no commit, no abandon, its lock gone with it
    assert not output.exists()
    with pytest.raises(UserInputError, match="not a complete pipeline output"):
        read_manifest(output)
    staged(output, "next").commit(OUTPUTS)
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


def _listing(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() if p.is_file() else b"<dir>"
            for p in sorted(directory.rglob("*"))}


@pytest.mark.parametrize("manifest", [
    {"name": "my-web-app", "version": "1.0.0", "manifest_version": 3},  # a browser extension
    {"format": "taskassign/fleet-snapshot/v1"},  # taskassign's, but not a pipeline output's
    "not even an object",
])
def test_a_directory_with_someone_elses_manifest_is_never_replaced(manifest: object, tmp_path: Path) -> None:
    """Issue 18, point 1: any manifest.json used to make a directory replaceable (and deleted with it)."""
    site = tmp_path / "site"
    site.mkdir()
    (site / MANIFEST_FILE).write_text(json.dumps(manifest))
    (site / "index.html").write_text("<html>")
    (site / "assets").mkdir()
    (site / "assets" / "app.js").write_text("x")
    before = _listing(site)
    with pytest.raises(UserInputError, match=r"not a taskassign pipeline manifest.*refusing to replace it"):
        OutputDirectory.prepare(site)
    assert _listing(site) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_a_pipeline_output_with_files_someone_added_is_not_replaced(tmp_path: Path) -> None:
    output = tmp_path / "out"
    staged(output, "first").commit(OUTPUTS)
    (output / "notes.txt").write_text("my analysis")
    before = _listing(output)
    with pytest.raises(UserInputError, match=r"also holds notes\.txt"):
        OutputDirectory.prepare(output)
    assert _listing(output) == before


def test_a_concurrent_runs_staging_directory_is_left_alone(tmp_path: Path) -> None:
    """Issue 18, point 1: every .NAME.staging-* sibling used to be deleted, under a concurrent run's feet."""
    output = tmp_path / "out"
    running = staged(output, "still being written")
    other = staged(output, "second run")
    assert running.staging.is_dir() and (Path(running.table("errors")) / "part-0.parquet").is_file()
    other.commit(OUTPUTS)
    assert running.staging.is_dir()
    running.commit(OUTPUTS)
    assert (output / "errors" / "part-0.parquet").read_text() == "still being written"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_live_run_in_another_process_is_left_alone(tmp_path: Path) -> None:
    output = tmp_path / "out"
    code = ("import sys, time; from taskassign.pipeline.output import OutputDirectory; "
            f"d = OutputDirectory.prepare({str(output)!r}); print(d.staging, flush=True); sys.stdin.read()")
    child = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        theirs = Path(child.stdout.readline().strip())
        assert theirs.is_dir()
        staged(output, "mine").commit(OUTPUTS)
        assert theirs.is_dir() and (theirs / STAGING_MARKER).is_file()
    finally:
        child.communicate("", timeout=60)
    # the process is gone, and its lock with it: the next run removes what it left
    staged(output, "again").commit(OUTPUTS)
    assert not theirs.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


@pytest.mark.parametrize("leftover", ["no marker", "a foreign marker", "a symbolic link", "an old foreign directory"])
def test_leftovers_that_are_not_provably_ours_are_kept(leftover: str, tmp_path: Path) -> None:
    output = tmp_path / "out"
    kept = tmp_path / ".out.staging-0123456789ab"
    if leftover == "an old foreign directory":
        kept = tmp_path / ".out.old-0123456789ab"
        kept.mkdir()
        (kept / MANIFEST_FILE).write_text("{}")
    elif leftover == "a symbolic link":
        (tmp_path / "elsewhere").mkdir()
        (tmp_path / "elsewhere" / STAGING_MARKER).write_text(json.dumps({"format": "taskassign/pipeline-staging/v1"}))
        kept.symlink_to(tmp_path / "elsewhere")
    else:
        kept.mkdir()
        if leftover == "a foreign marker":
            (kept / STAGING_MARKER).write_text(json.dumps({"format": "someone/else"}))
    (tmp_path / "elsewhere").mkdir(exist_ok=True)
    (tmp_path / "elsewhere" / "data.bin").write_text("precious")
    staged(output, "run").commit(OUTPUTS)
    assert kept.exists() or kept.is_symlink()
    assert (tmp_path / "elsewhere" / "data.bin").read_text() == "precious"


def test_an_old_output_is_removed_only_when_its_run_is_over(tmp_path: Path) -> None:
    output = tmp_path / "out"
    staged(output, "first").commit(OUTPUTS)
    # a run that died between its two renames: its old output aside, its staging directory never renamed
    dying = staged(output, "second")
    old = tmp_path / f".out.old-{dying.staging.name.rsplit('-', 1)[1]}"
    output.rename(old)
    # while it is alive (its staging directory still there), nothing of it is touched
    other = OutputDirectory.prepare(tmp_path / "out")
    assert old.is_dir() and dying.staging.is_dir()
    other.abandon()
    dying.release()  # it dies
    staged(output, "third").commit(OUTPUTS)
    assert not old.exists() and not dying.staging.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
