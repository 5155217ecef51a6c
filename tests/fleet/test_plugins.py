"""Assignor plug-ins named by data run nothing unless the run opts in (issue 18, point 2): a snapshot's
``applications.assignor`` of ``module:Class`` or ``file.py:Class`` is rejected as PLUGIN_NOT_ALLOWED without
importing anything, and the rest of the fleet runs."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskassign.assignors.registry import create_assignor, resolve
from taskassign.errors import PluginNotAllowedError, ScenarioError
from taskassign.fleet import reasons as R
from taskassign.fleet.application import check_application
from taskassign.fleet.bucket import bucket_table, process_bucket
from taskassign.fleet.tables import INPUT_TABLES
from taskassign.formats.group import parse_group
from taskassign.ids import ProcessId
from tests.fleet.assignors import spec
from tests.fleet.snapshots import APP, base_rows
from tests.group_helpers import group, member, v

MODULE = "taskassign_test_plugin_sentinel"


@pytest.fixture
def sentinel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A module and a file that leave a trace when imported (importing is running their code)."""
    trace = tmp_path / "imported"
    code = (f"import pathlib\npathlib.Path({str(trace)!r}).write_text('x')\n"
            "from taskassign.assignors.identity import IdentityTaskAssignor as A\n")
    (tmp_path / f"{MODULE}.py").write_text(code)
    (tmp_path / "plugin.py").write_text(code)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield trace
    sys.modules.pop(MODULE, None)


def specs(directory: Path) -> list[str]:
    return [f"{MODULE}:A", f"{MODULE}.A", f"{directory / 'plugin.py'}:A"]


def test_a_plugin_spec_from_data_is_refused_before_anything_is_imported(sentinel: Path) -> None:
    for plugin in specs(sentinel.parent):
        with pytest.raises(PluginNotAllowedError, match=r"plug-in.*--allow-plugins"):
            resolve(plugin, allow_plugins=False)
        assert check_application(None, plugin).code == R.PLUGIN_NOT_ALLOWED
    assert not sentinel.exists() and MODULE not in sys.modules
    assert resolve("high-availability", allow_plugins=False).classic_class().__name__ == "HighAvailabilityTaskAssignor"


def test_opting_in_loads_the_plugin(sentinel: Path) -> None:
    assert check_application(None, f"{MODULE}:A", allow_plugins=True).code is None
    assert sentinel.exists()
    assert callable(create_assignor(f"{MODULE}:A").assign)  # the user's own --assignor needs no opt-in


def test_the_runs_own_assignor_is_the_users_choice(sentinel: Path) -> None:
    check = check_application(None, f"{MODULE}:ignored", assignor_override=spec("GivesUp"))
    assert check.code is None and not sentinel.exists()


def _bucket(assignor: str) -> dict[str, object]:
    rows = base_rows()
    rows["applications"].append({**rows["applications"][0], "app_id": "plugged", "assignor": assignor})
    for name in ("subtopologies", "topic_partitions", "members", "member_tasks"):
        rows[name] += [{**r, "app_id": "plugged"} for r in rows[name] if r["app_id"] == APP]
    return {name: bucket_table(INPUT_TABLES[name], rows.get(name, [])) for name in INPUT_TABLES}


@pytest.mark.parametrize("allow", [False, True])
def test_a_bucket_rejects_the_application_and_runs_the_rest(sentinel: Path, allow: bool) -> None:
    result = process_bucket(_bucket(f"{MODULE}:A"), allow_plugins=allow)  # type: ignore[arg-type]
    by_app = {r["app_id"]: r for r in result.results}
    assert by_app[APP]["status"] == R.STATUS_ASSIGNED
    if allow:
        assert by_app["plugged"]["status"] == R.STATUS_ASSIGNED and sentinel.exists()
        return
    assert (by_app["plugged"]["status"], by_app["plugged"]["reason_code"]) == (R.STATUS_REJECTED, R.PLUGIN_NOT_ALLOWED)
    assert "--allow-plugins" in (by_app["plugged"]["reason"] or "")
    errors = [e for e in result.errors if e["app_id"] == "plugged"]
    assert {(e["table"], e["reason_code"]) for e in errors if e["table"] == "applications"} == {
        ("applications", R.PLUGIN_NOT_ALLOWED)}
    assert {e["reason_code"] for e in errors if e["table"] != "applications"} == {R.APPLICATION_REJECTED}
    assert not sentinel.exists() and MODULE not in sys.modules


def test_a_group_file_cannot_name_a_plugin(sentinel: Path) -> None:
    doc = group([member("m1", v(11, ProcessId.of_ints(0, 1)))])
    doc["capture"] = {"bootstrap_server": "b:9092", "group": "g", "captured_at_ms": 0, "group_state": "Stable",
                      "topology_source": "t", "configs_source": "c", "leader_source": "l", "assignor": f"{MODULE}:A"}
    with pytest.raises(ScenarioError, match=r"\$\.capture\.assignor: must name a built-in assignor"):
        parse_group(doc)
    assert not sentinel.exists()
