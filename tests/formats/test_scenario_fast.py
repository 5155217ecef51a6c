"""The fast readers of formats._scenario_fast build exactly what the general reader builds, and leave
every malformed value to it (so errors keep their messages and JSON paths)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from taskassign.errors import ScenarioError
from taskassign.formats import scenario as scenario_module
from taskassign.formats._scenario_fast import FastReader
from taskassign.formats._scenario_fields import PARTITION_FIELDS, TASK_FIELDS
from taskassign.formats.scenario import parse_scenario
from tests.helpers import GOLDEN_DIR

EXAMPLES = Path(__file__).parents[2] / "examples" / "scenarios"
FILES = sorted(GOLDEN_DIR.glob("*/*.scenario.json"))[::7] + sorted(EXAMPLES.glob("*.json"))


def _without_fast_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    class Never(FastReader):
        def tasks(self, items: Any) -> None:
            return None

        def task(self, item: Any) -> None:
            return None

        def task_list(self, items: Any, tasks: Any) -> None:
            return None

        def offset_sums(self, raw: Any, tasks: Any) -> None:
            return None

    monkeypatch.setattr(scenario_module, "FastReader", Never)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_fast_and_general_readers_build_the_same_state(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = json.loads(path.read_text())
    fast = parse_scenario(doc)
    _without_fast_paths(monkeypatch)
    assert parse_scenario(doc) == fast


def _task_by_task(monkeypatch: pytest.MonkeyPatch) -> None:
    """The per-task fast reader only (no whole-array column reader)."""
    class TaskByTask(FastReader):
        def tasks(self, items: Any) -> None:
            return None

    monkeypatch.setattr(scenario_module, "FastReader", TaskByTask)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_column_and_task_by_task_readers_build_the_same_state(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    doc = json.loads(path.read_text())
    assert FastReader().tasks(doc["tasks"]) is not None, "the column reader refuses a well-formed file"
    columns = parse_scenario(doc)
    _task_by_task(monkeypatch)
    assert parse_scenario(doc) == columns
    assert [t.id for t in parse_scenario(doc).state.tasks.values()] == list(columns.state.tasks)


@pytest.mark.parametrize("changes", [
    {"id": "1_0"},  # a duplicate id
    {"partitions": [{"topic": "x", "partition": 0, "source": True}]},  # a partition of task 1_0 too
    {"partitions": [{"topic": "t", "partition": 0, "source": True}, {"topic": "t", "partition": 0, "changelog": True}]},
    {"id": "app__0_0"},  # named and plain ids mixed
    {"changelog_end_offset_sum": 5, "partitions": [{"topic": "t", "partition": 0, "source": True}]},
])
def test_the_column_reader_leaves_cross_task_problems_to_the_general_reader(changes: dict[str, Any]) -> None:
    doc = _doc(**changes)
    assert FastReader().tasks(doc["tasks"]) is None
    with pytest.raises(ScenarioError):
        parse_scenario(doc)


def _doc(**task_changes: Any) -> dict[str, Any]:
    task = {"id": "0_0", "stores": ["s"], "changelog_end_offset_sum": 5,
            "partitions": [{"topic": "in", "partition": 0, "source": True, "racks": ["r1"]},
                           {"topic": "cl", "partition": 0, "changelog": True}]}
    task.update(task_changes)
    return {"format": "taskassign/scenario/v1", "tasks": [{"id": "1_0", "stores": []} | {
        "partitions": [{"topic": "x", "partition": 0, "source": True}]}, task],
        "clients": [{"process_id": "00000000-0000-0000-0000-000000000001", "threads": 1,
                     "previous_active": ["0_0"], "task_offset_sums": {"0_0": -2}}]}


@pytest.mark.parametrize("changes", [
    {"stores": ["s", "s"]}, {"changelog_end_offset_sum": True}, {"changelog_end_offset_sum": -1},
    {"state_bytes": 1.5}, {"partitions": [{"topic": "", "partition": 0, "source": True}]},
    {"partitions": [{"topic": "t", "partition": 0}]}, {"partitions": [{"topic": "t", "partition": 0,
                                                                      "source": True, "racks": [1]}]},
    {"id": "1_0"}, {"id": "a__0_0"}, {"extra": 1}, {"stores": [["s"]]},
    {"partitions": [{"topic": "t", "partition": 0, "source": True, "racks": [[], "r1"]}]},
])
def test_malformed_tasks_raise_the_general_readers_error(changes: dict[str, Any],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ScenarioError) as fast:
        parse_scenario(_doc(**changes))
    _without_fast_paths(monkeypatch)
    with pytest.raises(ScenarioError) as general:
        parse_scenario(_doc(**changes))
    assert str(fast.value) == str(general.value)


#: A well-formed value, other than the default, for every field of _scenario_fields' tables.
_TASK_SAMPLES = {"id": "0_0", "stores": ["a", "b"], "changelog_end_offset_sum": 7, "state_bytes": 1_000,
                 "partitions": [{"topic": "cl", "partition": 0, "changelog": True}]}
_PARTITION_SAMPLES = {"topic": "in", "partition": 3, "source": True, "changelog": True, "racks": ["r1", "r2"]}


def test_every_field_of_the_table_has_a_sample() -> None:
    """A new field in _scenario_fields needs a sample here, so the tests below cover it."""
    assert {f.key for f in TASK_FIELDS} == _TASK_SAMPLES.keys()
    assert {f.key for f in PARTITION_FIELDS} == _PARTITION_SAMPLES.keys()


@pytest.mark.parametrize("key", [f.key for f in TASK_FIELDS] + [f"partitions.{f.key}" for f in PARTITION_FIELDS])
def test_both_readers_read_every_field_of_the_table(key: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each field set to a non-default value: the fast reader takes the task (it does not hand it to the
    general reader) and builds what the general reader builds."""
    task: dict[str, Any] = {"id": "0_0", "partitions": [{"topic": "cl", "partition": 0, "changelog": True}]}
    if key.startswith("partitions."):
        task["partitions"] = [{"topic": "cl", "partition": 0, "changelog": True,
                               key.removeprefix("partitions."): _PARTITION_SAMPLES[key.removeprefix("partitions.")]}]
    else:
        task[key] = _TASK_SAMPLES[key]
    assert FastReader().task(task) is not None, f"the fast reader refuses a well-formed {key!r}"
    assert FastReader().tasks([task]) is not None, f"the column reader refuses a well-formed {key!r}"
    doc = {"format": "taskassign/scenario/v1", "tasks": [task],
           "clients": [{"process_id": "00000000-0000-0000-0000-000000000001", "threads": 1}]}
    fast = parse_scenario(doc)
    _without_fast_paths(monkeypatch)
    assert parse_scenario(doc) == fast


@pytest.mark.parametrize("seed", range(40))
def test_the_column_reader_orders_and_splits_partitions_as_task_info_does(seed: int) -> None:
    """1 to 4 partitions per task, in any order, of any kind: the same TaskInfo as ``new_task_info``."""
    import random

    from taskassign.model import new_task_info

    rng = random.Random(seed)
    tasks = []
    for i in range(30):
        count = rng.choice([1, 1, 2, 2, 2, 3, 4])
        chosen = rng.sample([("in", 0), ("in", 1), ("cl", 0), ("z", 2), ("a", 9)], count)
        parts = []
        for topic, number in chosen:
            kind = rng.choice([(True, False), (False, True), (True, True)])
            parts.append({"topic": f"{topic}-{i}", "partition": number, "source": kind[0], "changelog": kind[1]})
        tasks.append({"id": f"0_{i}", "partitions": parts})
    reader = FastReader()
    read = reader.tasks(tasks)
    assert read is not None
    general = scenario_module._parse_tasks(tasks, None, None)
    assert read == general
    assert list(read.values()) == [new_task_info(t.id, (), tuple(reversed(t.topic_partitions)), 0, None)
                                   for t in general.values()]
