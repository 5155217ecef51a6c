"""The pipeline against careless and hostile inputs (issue 18): what it refuses, what it rejects row by row
while the rest of the fleet runs, and what it never does (replace a directory it did not write, run code a
snapshot names)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from taskassign.fleet import reasons as R
from taskassign.pipeline.run import PipelineOptions, run_pipeline
from tests.pipeline.conftest import APP, EXAMPLE_FLEET, base_rows, write_snapshot

pytestmark = pytest.mark.spark
runner = CliRunner()


def rows(output: Path, name: str) -> list[dict[str, Any]]:
    return pq.read_table(output / name).to_pylist()


def statuses(output: Path) -> dict[str, tuple[str, str | None]]:
    return {r["app_id"]: (r["status"], r["reason_code"]) for r in rows(output, "app_metrics")}


def with_second_app(app_id: str, **application: Any) -> dict[str, list[dict[str, Any]]]:
    """The base snapshot plus a copy of its application under ``app_id`` (its row updated by ``application``)."""
    snapshot = base_rows()
    snapshot["applications"].append({**snapshot["applications"][0], "app_id": app_id, **application})
    for name in ("subtopologies", "repartition_topics", "topic_partitions", "members", "member_tasks"):
        snapshot[name] = snapshot.get(name, []) + [{**r, "app_id": app_id} for r in snapshot.get(name, [])
                                                   if r["app_id"] == APP]
    return snapshot


# -- point 1: a directory that is not a pipeline output is never replaced -------------------------------------

def test_a_web_apps_directory_is_refused_with_exit_2_and_left_untouched(spark: Any, tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "manifest.json").write_text(json.dumps({"name": "my app", "manifest_version": 3}))
    (site / "index.html").write_text("<html>")
    snapshot = write_snapshot(tmp_path / "snap", base_rows())
    result = runner.invoke(app, ["pipeline", "run", "--input", str(snapshot), "--output", str(site)])
    assert result.exit_code == 2, result.output
    assert "not a taskassign pipeline manifest" in " ".join(result.output.split())
    assert sorted(p.name for p in site.iterdir()) == ["index.html", "manifest.json"]
    assert (site / "index.html").read_text() == "<html>"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site", "snap"]


# -- point 2: plug-ins named by the snapshot run only when the run allows them --------------------------------

@pytest.fixture
def plugin(tmp_path: Path) -> tuple[str, Path]:
    """A plug-in file that leaves a trace when it is imported (on any process: driver or worker)."""
    trace = tmp_path / "imported"
    path = tmp_path / "plugin.py"
    path.write_text(f"import pathlib\npathlib.Path({str(trace)!r}).write_text('x')\n"
                    "from taskassign.assignors.identity import IdentityTaskAssignor as A\n")
    return f"{path}:A", trace


def test_a_plugin_named_by_the_snapshot_is_rejected_and_the_rest_runs(
    spark: Any, tmp_path: Path, plugin: tuple[str, Path]
) -> None:
    spec, trace = plugin
    snapshot = write_snapshot(tmp_path / "snap", with_second_app("plugged", assignor=spec))
    result = run_pipeline(spark, PipelineOptions(snapshot, tmp_path / "out"))
    assert result.manifest["reconciled"]
    assert statuses(result.output_dir) == {APP: ("ASSIGNED", None), "plugged": ("REJECTED", R.PLUGIN_NOT_ALLOWED)}
    (reason,) = [e["reason"] for e in rows(result.output_dir, "errors") if e["reason_code"] == R.PLUGIN_NOT_ALLOWED]
    assert spec in reason and "--allow-plugins" in reason
    assert not trace.exists()


def test_allow_plugins_runs_them(spark: Any, tmp_path: Path, plugin: tuple[str, Path]) -> None:
    spec, trace = plugin
    snapshot = write_snapshot(tmp_path / "snap", with_second_app("plugged", assignor=spec))
    result = runner.invoke(app, ["pipeline", "run", "--input", str(snapshot), "--output", str(tmp_path / "out"),
                                 "--allow-plugins"])
    assert result.exit_code == 0, result.output
    assert statuses(tmp_path / "out") == {APP: ("ASSIGNED", None), "plugged": ("ASSIGNED", None)}
    assert trace.exists()
    assert json.loads((tmp_path / "out" / "manifest.json").read_text())["options"]["allow_plugins"] is True


# -- point 3: bytes that are not text are rejected rows, never U+FFFD, never a crash --------------------------

def _replace_in_line(path: Path, needle: bytes, old: bytes, new: bytes) -> None:
    lines = path.read_bytes().split(b"\n")
    (index,) = [i for i, line in enumerate(lines) if needle in line]
    lines[index] = lines[index].replace(old, new, 1)
    path.write_bytes(b"\n".join(lines))


def _assert_bad_text_rejected(output: Path, manifest: dict[str, Any], expected: dict[str, list[str]]) -> None:
    """``expected``: per table, the escaped bytes each rejected row's source_row shows."""
    assert manifest["reconciled"]
    assert statuses(output) == {APP: ("ASSIGNED", None), "other": ("ASSIGNED", None)}
    malformed = [e for e in rows(output, "errors") if e["reason_code"] == R.MALFORMED_ROW]
    for table, shown in expected.items():
        found = [e for e in malformed if e["table"] == table]
        assert len(found) == len(shown), (table, malformed)
        for text in shown:
            assert any(text in e["source_row"] for e in found), (text, found)
    for name in ("client_assignments", "consumer_assignments", "errors", "app_metrics"):
        assert "\ufffd" not in json.dumps(rows(output, name), default=str)


def test_json_lines_with_invalid_utf8_lines_and_values(spark: Any, tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "snap", with_second_app("other"), fmt="json")
    members = snapshot / "members.jsonl"
    _replace_in_line(members, b'"app_id": "other", "consumer_id": "c2-1"', b'"r2"', b'"\xff\xfe-a"')
    _replace_in_line(members, b'"app_id": "other", "consumer_id": "c1-2"', b'"r1"', b'"\\ud800"')
    with (snapshot / "member_tasks.jsonl").open("ab") as fh:
        fh.write(b"\xff\xfe{\x00\n")
    result = run_pipeline(spark, PipelineOptions(snapshot, tmp_path / "out"))
    _assert_bad_text_rejected(result.output_dir, result.manifest, {
        "members": ['"\\xff\\xfe-a"', '"\\ud800"'], "member_tasks": ["\\xff\\xfe{\\x00"]})
    reasons = " ".join(e["reason"] for e in rows(result.output_dir, "errors"))
    assert "not valid UTF-8" in reasons and "escape without its pair" in reasons


def test_csv_with_invalid_utf8_cells(spark: Any, tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "snap", with_second_app("other"), fmt="csv")
    members = snapshot / "members.csv"
    _replace_in_line(members, b'"other","c2-1"', b'"r2"', b'"\xff\xfe-a"')
    _replace_in_line(members, b'"other","c1-1"', b'"{}"', b'"{""zone"":""\\udc00""}"')
    result = run_pipeline(spark, PipelineOptions(snapshot, tmp_path / "out"))
    _assert_bad_text_rejected(result.output_dir, result.manifest, {"members": ["\\\\xff\\\\xfe-a", "zone"]})
    reasons = sorted(e["reason"] for e in rows(result.output_dir, "errors") if e["reason_code"] == R.MALFORMED_ROW)
    assert reasons[0].startswith("column client_tags: a \\uD800-\\uDFFF escape without its pair")
    assert reasons[1].startswith("column rack: the cell is not valid UTF-8")


def test_parquet_with_an_invalid_utf8_string(spark: Any, tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "snap", with_second_app("other"))
    members = pq.read_table(snapshot / "members.parquet")
    index = [i for i, r in enumerate(members.to_pylist()) if (r["app_id"], r["consumer_id"]) == ("other", "c2-1")]
    racks = [v.encode() if v is not None else None for v in members.column("rack").to_pylist()]
    racks[index[0]] = b"\xff\xfe-a"
    bad = pa.array(racks, pa.binary()).view(pa.string())
    pq.write_table(members.set_column(members.schema.get_field_index("rack"), "rack", bad),
                   snapshot / "members.parquet")
    result = run_pipeline(spark, PipelineOptions(snapshot, tmp_path / "out"))
    _assert_bad_text_rejected(result.output_dir, result.manifest, {"members": ["\\\\xff\\\\xfe-a"]})


# -- point 4: an application is assigned on its whole topology or not at all ----------------------------------

def test_an_unreadable_subtopologies_row_rejects_its_application(spark: Any, tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "snap", with_second_app("other"), fmt="json")
    _replace_in_line(snapshot / "subtopologies.jsonl", b'"app_id": "other", "subtopology": 1', b'"subtopology": 1',
                     b'"subtopology": "one"')
    result = run_pipeline(spark, PipelineOptions(snapshot, tmp_path / "out"))
    assert result.manifest["reconciled"]
    assert statuses(result.output_dir) == {APP: ("ASSIGNED", None), "other": ("REJECTED", R.INCOMPLETE_TOPOLOGY)}
    (app_row,) = [e for e in rows(result.output_dir, "errors")
                  if e["table"] == "applications" and e["app_id"] == "other"]
    assert "subtopologies row (subtopology (unreadable))" in app_row["reason"] and "MALFORMED_ROW" in app_row["reason"]
    assert not [r for r in rows(result.output_dir, "client_assignments") if r["app_id"] == "other"]


# -- point 5: a table that cannot be read is an input error naming the table and the file ---------------------

def _damage(path: Path, how: str) -> None:
    data = path.read_bytes()
    if how == "empty":
        path.write_bytes(b"")
    elif how == "truncated":
        path.write_bytes(data[: len(data) // 2])
    else:  # its footer intact, its pages not
        path.write_bytes(data[:100] + b"\xab" * (len(data) // 2 - 100) + data[len(data) // 2:])


def _fleet_copy(tmp_path: Path) -> Path:
    """The example fleet (its tables are large enough to damage a page and keep the footer)."""
    snapshot = tmp_path / "snap"
    shutil.copytree(EXAMPLE_FLEET, snapshot)
    return snapshot


@pytest.mark.parametrize("how", ["empty", "truncated", "damaged pages"])
def test_an_unreadable_parquet_file_exits_2_naming_table_and_file(spark: Any, tmp_path: Path, how: str) -> None:
    snapshot = _fleet_copy(tmp_path)
    _damage(snapshot / "member_tasks.parquet", how)
    result = runner.invoke(app, ["pipeline", "run", "--input", str(snapshot), "--output", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    message = "".join(result.output.split())
    assert "table'member_tasks'" in message and str(snapshot / "member_tasks.parquet") in message
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snap"]


def test_a_fifo_as_a_table_exits_2(spark: Any, tmp_path: Path) -> None:
    snapshot = write_snapshot(tmp_path / "snap", base_rows(), fmt="json")
    (snapshot / "member_tasks.jsonl").unlink()
    os.mkfifo(snapshot / "member_tasks.jsonl")
    result = runner.invoke(app, ["pipeline", "run", "--input", str(snapshot), "--output", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "not a regular file or directory" in " ".join(result.output.split())


@pytest.mark.slow  # a whole `pipeline run` in a subprocess with a fresh JVM
def test_the_command_prints_no_jvm_stack_trace(tmp_path: Path) -> None:
    """In its own process, so that what Spark's JVM prints is seen too."""
    snapshot = _fleet_copy(tmp_path)
    _damage(snapshot / "member_tasks.parquet", "damaged pages")
    done = subprocess.run([sys.executable, "-m", "taskassign", "pipeline", "run", "--input", str(snapshot),
                           "--output", str(tmp_path / "out"), "--master", "local[1]"],
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 2, done.stderr[-3000:]
    assert "table 'member_tasks'" in " ".join(done.stderr.split())
    for trace in ("Traceback", "Py4J", "\tat org.apache", "Exception"):
        assert trace not in done.stderr, done.stderr[-3000:]
