"""An application whose topology or topic metadata rows are not all usable is rejected, never assigned on
part of its tasks (issue 18, point 4)."""

from __future__ import annotations

from typing import Any

import pytest

from taskassign.fleet import reasons as R
from taskassign.fleet.bucket import bucket_table, process_bucket
from taskassign.fleet.tables import INPUT_TABLES
from tests.fleet.snapshots import APP, base_rows

OTHER = "other-app"


def two_apps() -> dict[str, list[dict[str, Any]]]:
    rows = base_rows()
    for name, table in list(rows.items()):
        rows[name] = table + [{**r, "app_id": OTHER} for r in table]
    return rows


def run(rows: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    result = process_bucket({n: bucket_table(spec, rows.get(n, [])) for n, spec in INPUT_TABLES.items()})
    return {r["app_id"]: r for r in result.results}


BREAKAGES = {
    "a malformed subtopologies row": ("subtopologies", 1, {"_malformed": "the line is not a JSON object"},
                                      "subtopologies row (subtopology 1)", R.MALFORMED_ROW),
    "a subtopology with a blank store": ("subtopologies", 0, {"stores": ["counts", " "]},
                                         "subtopologies row (subtopology 0)", R.BAD_VALUE),
    "a repartition count of zero": ("repartition_topics", None, {"topic": "clicks", "num_partitions": 0},
                                    "repartition_topics row (topic clicks)", R.BAD_VALUE),
    "a source partition with a blank rack": ("topic_partitions", 1, {"replica_racks": ["r1", ""]},
                                             "topic_partitions row (topic orders, partition 1)", R.BAD_VALUE),
}


@pytest.mark.parametrize("case", sorted(BREAKAGES))
def test_the_application_is_rejected_naming_the_row_and_the_rest_runs(case: str) -> None:
    table, index, change, named, code = BREAKAGES[case]
    rows = two_apps()
    if index is None:
        rows[table].append({"app_id": APP, **change})
    else:
        rows[table][index].update(change)
    results = run(rows)
    assert results[OTHER]["status"] == R.STATUS_ASSIGNED
    broken = results[APP]
    assert (broken["status"], broken["reason_code"]) == (R.STATUS_REJECTED, R.INCOMPLETE_TOPOLOGY)
    assert named in (broken["reason"] or "") and code in (broken["reason"] or "")


def test_an_unreferenced_partition_row_does_not_reject_its_application() -> None:
    rows = two_apps()
    rows["topic_partitions"].append({**rows["topic_partitions"][0], "topic": "nobody-reads-it"})
    assert run(rows)[APP]["status"] == R.STATUS_ASSIGNED


def test_a_changelog_topic_of_two_subtopologies_is_an_invalid_topology() -> None:
    """Its partitions would be partitions of two tasks (issue 18, point 9: a scenario refuses that)."""
    rows = two_apps()
    rows["subtopologies"][1].update(stores=["other-store"], changelog_topics=["orders-app-counts-changelog"])
    results = run(rows)
    assert results[OTHER]["status"] == R.STATUS_ASSIGNED
    assert (results[APP]["status"], results[APP]["reason_code"]) == (R.STATUS_REJECTED, R.INVALID_TOPOLOGY)
    assert "changelog topic orders-app-counts-changelog is a topic of subtopologies 0, 1" in (
        results[APP]["reason"] or "")


def test_a_group_file_with_a_shared_changelog_topic_is_refused() -> None:
    from taskassign.errors import ScenarioError
    from taskassign.formats.group import parse_group
    from taskassign.ids import ProcessId
    from tests.group_helpers import group, member, v

    doc = group([member("m1", v(11, ProcessId.of_ints(0, 1)))], stateful=True)
    doc["topology"]["subtopologies"].append({"id": 1, "source_topics": ["topic2"], "stores": ["s2"],
                                             "changelog_topics": ["app-store-changelog"]})
    doc["topics"]["topic2"] = {"partitions": 3}
    with pytest.raises(ScenarioError, match=r"subtopologies\[1\]\.changelog_topics\[0\]: topic 'app-store-changelog'"):
        parse_group(doc)


@pytest.mark.parametrize(("table", "change", "code"), [
    ("topic_partitions", {"partition": 2**31 - 1}, R.INCOMPLETE_TOPOLOGY),
    ("repartition_topics", {"topic": "clicks", "num_partitions": 2**31 - 1}, R.INCOMPLETE_TOPOLOGY),
])
def test_one_huge_number_does_not_make_billions_of_tasks(table: str, change: dict[str, Any], code: str) -> None:
    """Found by the robustness fuzz: one partition number of 2^31 - 1 made the bucket allocate 2^31 tasks
    (MemoryError, the worker killed). A topic has at most MAX_PARTITIONS partitions here."""
    from taskassign.model import MAX_PARTITIONS

    rows = two_apps()
    if table == "topic_partitions":
        rows[table].append({**rows[table][0], **change})
    else:
        rows[table].append({"app_id": APP, **change})
    results = run(rows)
    assert results[OTHER]["status"] == R.STATUS_ASSIGNED
    assert (results[APP]["status"], results[APP]["reason_code"]) == (R.STATUS_REJECTED, code)
    assert f"{MAX_PARTITIONS}" in (results[APP]["reason"] or "")


def test_more_than_max_tasks_is_an_invalid_topology() -> None:
    from taskassign.errors import TopologyError
    from taskassign.leader.partition_grouper import SubtopologySpec, resolve_topology
    from taskassign.model import MAX_TASKS

    subs = [SubtopologySpec(i, (f"t{i}",)) for i in range(3)]
    counts = {f"t{i}": MAX_TASKS // 2 for i in range(3)}
    with pytest.raises(TopologyError, match=f"more than the {MAX_TASKS} taskassign assigns"):
        resolve_topology(subs, counts, {})
    assert sum(s.num_tasks for s in resolve_topology(subs[:2], counts, {}).subtopologies) == MAX_TASKS


def test_a_group_file_partition_number_is_bounded() -> None:
    from taskassign.errors import ScenarioError
    from taskassign.formats.group import parse_group
    from taskassign.ids import ProcessId
    from taskassign.model import MAX_PARTITIONS
    from tests.group_helpers import group, member, v

    doc = group([member("m1", v(11, ProcessId.of_ints(0, 1)))])
    doc["topics"]["topic1"] = {"partitions": [{"partition": 0}, {"partition": MAX_PARTITIONS}]}
    with pytest.raises(ScenarioError, match=rf"partitions\[1\]\.partition: must be between 0 and {MAX_PARTITIONS - 1}"):
        parse_group(doc)
