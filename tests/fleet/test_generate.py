from __future__ import annotations

import json
from pathlib import Path

import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from taskassign.errors import UserInputError
from taskassign.fleet.generate import FleetSpec, generate_apps, write_fleet
from taskassign.fleet.snapshot_dir import MARKER_FILE, SNAPSHOT_FORMAT
from taskassign.fleet.tables import INPUT_TABLES
from taskassign.ids import ProcessId
from taskassign.leader.partition_grouper import SubtopologySpec, resolve_topology
from taskassign.wire.subscription_info import SubscriptionInfo


def apps(n: int, **kwargs: int) -> list:  # type: ignore[type-arg]
    return list(generate_apps(FleetSpec(apps=n, seed=11, **kwargs)))


def test_same_seed_same_fleet_and_apps_do_not_depend_on_fleet_size() -> None:
    first, again = apps(5), apps(5)
    assert [a.rows for a in first] == [a.rows for a in again]
    assert apps(8)[3].rows == first[3].rows
    other = list(generate_apps(FleetSpec(apps=5, seed=12)))
    assert [a.rows for a in other] != [a.rows for a in first]


def test_rows_have_exactly_the_table_columns() -> None:
    for app in apps(10):
        for table, rows in app.rows.items():
            for row in rows:
                assert set(row) == set(INPUT_TABLES[table].column_names), table


def test_every_application_is_consistent() -> None:
    """Topologies resolve, reported tasks exist, members' process ids are UUIDs, offsets are valid."""
    for app in apps(40):
        subs = [SubtopologySpec(r["subtopology"], tuple(r["source_topics"]), tuple(r["sink_topics"]),
                                tuple(tuple(g) for g in r["copartition_groups"])) for r in app.rows["subtopologies"]]
        counts: dict[str, int] = {}
        for r in app.rows["topic_partitions"]:
            counts[r["topic"]] = max(counts.get(r["topic"], 0), r["partition"] + 1)
        repartition = {r["topic"]: r["num_partitions"] for r in app.rows["repartition_topics"]}
        external = {t: n for t, n in counts.items() if t not in repartition}
        resolved = resolve_topology(subs, external, repartition)
        tasks = {f"{s.id}_{p}" for s in resolved.subtopologies for p in range(s.num_tasks)}
        consumers = {r["consumer_id"] for r in app.rows["members"]}
        for r in app.rows["members"]:
            if r["subscription_info"] is None:
                ProcessId(r["process_id"])
                continue
            info = SubscriptionInfo.decode(r["subscription_info"])
            assert r["process_id"] is None and info.process_id is not None and info.user_endpoint
            assert all(str(t) in tasks and (o == -2 or o >= 0) for t, o in info.offset_sums().items())
        for r in app.rows["member_tasks"]:
            assert r["task_id"] in tasks and r["consumer_id"] in consumers
            assert r["offset_sum"] is None or r["offset_sum"] == -2 or r["offset_sum"] >= 0
        keys = [(r["consumer_id"], r["task_id"]) for r in app.rows["member_tasks"]]
        assert len(keys) == len(set(keys))
        tp_keys = [(r["topic"], r["partition"]) for r in app.rows["topic_partitions"]]
        assert len(tp_keys) == len(set(tp_keys))


def test_sizes_follow_tasks_per_app() -> None:
    for app in apps(5, tasks_per_app=200):
        subs = app.rows["subtopologies"]
        assert 150 <= sum(_partitions(app, s) for s in subs) <= 260


def _partitions(app, sub) -> int:  # type: ignore[no-untyped-def]
    topic = sub["source_topics"][0]
    rows = [r for r in app.rows["topic_partitions"] if r["topic"] == topic]
    if rows:
        return max(r["partition"] for r in rows) + 1
    repartition = {r["topic"]: r["num_partitions"] for r in app.rows["repartition_topics"]}
    fixed = repartition.get(topic)
    if fixed is not None:
        return int(fixed)
    writer = next(s for s in app.rows["subtopologies"] if topic in s["sink_topics"])
    return _partitions(app, writer)


def test_the_mix_has_small_medium_and_large_applications() -> None:
    sizes = [sum(_partitions(a, s) for s in a.rows["subtopologies"]) for a in apps(200)]
    assert min(sizes) < 20 and max(sizes) > 500
    assert sum(1 for s in sizes if s <= 64) > len(sizes) / 2


@pytest.mark.parametrize("fmt", ["parquet", "csv", "json"])
def test_write_fleet_in_each_format(tmp_path: Path, fmt: str) -> None:
    summary = write_fleet(FleetSpec(apps=6, seed=3, bad_records=4), tmp_path, fmt)  # type: ignore[arg-type]
    assert len(summary.planted) == 4
    suffix = {"parquet": "parquet", "csv": "csv", "json": "jsonl"}[fmt]
    for name, spec in INPUT_TABLES.items():
        path = tmp_path / f"{name}.{suffix}"
        if fmt == "parquet":
            table = pq.read_table(path)
            assert table.column_names == list(spec.column_names)
            assert table.num_rows == summary.rows[name]
        elif fmt == "csv":
            table = pcsv.read_csv(path)
            assert table.column_names == list(spec.column_names)
            assert table.num_rows == summary.rows[name]
        else:
            lines = path.read_text().splitlines()
            assert len(lines) == summary.rows[name]
            assert all(set(json.loads(line)) == set(spec.column_names) for line in lines)


def test_rewriting_in_another_format_replaces_the_tables(tmp_path: Path) -> None:
    write_fleet(FleetSpec(apps=2), tmp_path, "csv")
    write_fleet(FleetSpec(apps=2), tmp_path, "parquet")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([MARKER_FILE, *(f"{n}.parquet" for n in INPUT_TABLES)])


def test_a_quarter_of_the_applications_send_subscription_bytes() -> None:
    generated = apps(40)
    with_bytes = [a for a in generated if any(m["subscription_info"] for m in a.rows["members"])]
    assert 4 <= len(with_bytes) <= 20
    for app in with_bytes:
        assert all(m["subscription_info"] for m in app.rows["members"])
        assert all(r["offset_sum"] is None for r in app.rows["member_tasks"])


def test_planted_bad_records_are_in_the_tables(tmp_path: Path) -> None:
    summary = write_fleet(FleetSpec(apps=20, seed=5, bad_records=8), tmp_path)
    tables = {name: pq.read_table(tmp_path / f"{name}.parquet").to_pylist() for name in INPUT_TABLES}
    app_ids = {r["app_id"] for r in tables["applications"]}
    bad_task_ids = [r for r in tables["member_tasks"] if r["task_id"].startswith("x")]
    orphans = [r for r in tables["members"] if r["app_id"] not in app_ids]
    no_end = [r for r in tables["topic_partitions"] if r["topic"].endswith("-changelog") and r["end_offset"] is None]
    bad_configs = [r for r in tables["applications"] if dict(r["configs"]).get("num.standby.replicas") == "-1"]
    planted = " ".join(summary.planted)
    assert len(bad_task_ids) == planted.count("does not parse") > 0
    assert len(orphans) == planted.count("unknown application") > 0
    assert len(no_end) == planted.count("has no end offset") > 0
    assert len(bad_configs) <= planted.count("num.standby.replicas = -1")


def _listing(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes() for p in sorted(directory.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("foreign", ["a table file of someone else", "a manifest of another kind", "an extra file"])
def test_a_directory_it_did_not_write_is_left_untouched(foreign: str, tmp_path: Path) -> None:
    """Issue 18, point 1: the generator used to delete <table>.parquet/.csv/.jsonl in any directory."""
    target = tmp_path / "snap"
    if foreign == "an extra file":
        write_fleet(FleetSpec(apps=1), target)
        (target / "README.txt").write_text("mine")
    else:
        target.mkdir()
        (target / "applications.csv").write_text("app_id\nx\n")
        if foreign == "a manifest of another kind":
            (target / MARKER_FILE).write_text(json.dumps({"format": "taskassign/pipeline-manifest/v1", "tables": {}}))
    before = _listing(target)
    with pytest.raises(UserInputError, match="refusing to replace it") as caught:
        write_fleet(FleetSpec(apps=2), target, "csv")
    assert str(target) in str(caught.value)
    assert _listing(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snap"]


def test_the_marker_lists_what_was_written(tmp_path: Path) -> None:
    summary = write_fleet(FleetSpec(apps=3, seed=4, bad_records=1), tmp_path / "snap", "json")
    marker = json.loads((tmp_path / "snap" / MARKER_FILE).read_text())
    assert marker["format"] == SNAPSHOT_FORMAT and marker["written_by"] == "taskassign fleet generate"
    assert {n: t["rows"] for n, t in marker["tables"].items()} == summary.rows
    assert {t["file"] for t in marker["tables"].values()} == {f"{n}.jsonl" for n in INPUT_TABLES}
    assert marker["fleet"] == {"apps": 3, "seed": 4, "tasks_per_app": None, "bad_records": 1}
    again = tmp_path / "again"
    write_fleet(FleetSpec(apps=3, seed=4, bad_records=1), again, "json")
    assert _listing(again) == _listing(tmp_path / "snap")  # deterministic, marker included


def test_the_generator_and_capture_replace_each_others_snapshots(tmp_path: Path) -> None:
    from taskassign.capture.snapshot import write_snapshot

    target = tmp_path / "snap"
    write_fleet(FleetSpec(apps=2), target, "csv")
    write_snapshot(target, [])
    assert json.loads((target / MARKER_FILE).read_text())["written_by"] == "taskassign capture"
    write_fleet(FleetSpec(apps=2), target)
    assert json.loads((target / MARKER_FILE).read_text())["written_by"] == "taskassign fleet generate"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["snap"]
