"""Issue 32 point 4 on the Spark path: plug-ins that exit, hang, allocate without bound or print run in their own
process on each worker (the run's --plugin-timeout and --plugin-memory reach the workers): each application is
flagged ASSIGNOR_FAILED naming what happened, and the rest of the fleet is assigned."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from taskassign.fleet import reasons as R
from tests.assignors.hostile_plugins import KINDS, LIMITS, spec
from tests.pipeline.conftest import APP, base_rows, write_snapshot
from tests.pipeline.test_reliability import rows

pytestmark = pytest.mark.spark


def test_hostile_plugins_are_flagged_and_the_fleet_runs(spark: Any, tmp_path: Path) -> None:
    snapshot = base_rows()
    for kind in KINDS:
        app_id = f"plugged-{kind.lower()}"
        snapshot["applications"].append({**snapshot["applications"][0], "app_id": app_id, "assignor": spec(kind)})
        for name in ("subtopologies", "repartition_topics", "topic_partitions", "members", "member_tasks"):
            snapshot[name] = snapshot.get(name, []) + [{**r, "app_id": app_id} for r in snapshot.get(name, [])
                                                       if r["app_id"] == APP]
    directory = write_snapshot(tmp_path / "snap", snapshot)
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["pipeline", "run", "--input", str(directory), "--output", str(out),
                                      "--allow-plugins", *LIMITS])
    assert result.exit_code in (0, 1), result.output
    assert "computing the assignment" not in result.output  # a plug-in's print never reaches ours
    by_app = {r["app_id"]: r for r in rows(out, "app_metrics")}
    assert by_app[APP]["status"] == "ASSIGNED"
    for kind, said in KINDS.items():
        row = by_app[f"plugged-{kind.lower()}"]
        assert row["reason_code"] == R.ASSIGNOR_FAILED, row
        assert re.search(said, row["reason"] or ""), row["reason"]
    options = json.loads((out / "manifest.json").read_text())["options"]
    assert (options["plugin_timeout_s"], options["plugin_memory_mib"]) == (5.0, 64)
