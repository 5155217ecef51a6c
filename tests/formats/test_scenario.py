from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from taskassign.errors import ScenarioError
from taskassign.formats.scenario import parse_scenario, read_scenario, scenario_to_dict, write_scenario
from taskassign.ids import ProcessId, TaskId
from tests.helpers import GOLDEN_DIR, scenario_doc

Doc = dict[str, Any]


def test_minimal_scenario_derives_previous_tasks_and_lags() -> None:
    s = parse_scenario(scenario_doc())
    p1, p2 = ProcessId.of_ints(0, 1), ProcessId.of_ints(0, 2)
    c1, c2 = s.state.clients[p1], s.state.clients[p2]
    assert c1.num_processing_threads == 2
    assert c2.consumer_client_ids == (f"{p2}-StreamThread-1",)
    assert [str(t) for t in c1.previous_active_tasks] == ["0_0", "1_0"]
    # 0_1 was reported with an offset sum (40) but not listed: a previous standby, as in Kafka.
    assert [str(t) for t in c1.previous_standby_tasks] == ["0_1"]
    assert c1.lag_for(TaskId(0, 0)) == -2
    assert c1.lag_for(TaskId(0, 1)) == 10
    assert c2.lag_for(TaskId(0, 0)) == 100
    assert s.state.now_ms == 1000 and s.state.configs.num_standby_replicas == 1
    assert s.leader_process_id == p1


def test_every_golden_scenario_reads() -> None:
    files = sorted(GOLDEN_DIR.glob("*/*.scenario.json"))
    assert len(files) == 498
    for path in files:
        scenario = read_scenario(path)
        assert scenario.state.tasks


def test_round_trip_through_dict(tmp_path: Path) -> None:
    original = parse_scenario(scenario_doc())
    write_scenario(original, tmp_path / "x.scenario.json")
    again = read_scenario(tmp_path / "x.scenario.json")
    assert scenario_to_dict(again) == scenario_to_dict(original)
    assert again.state.clients == original.state.clients
    assert again.state.tasks == original.state.tasks


def _set(path: list[Any], value: Any) -> Callable[[Doc], None]:
    def mutate(doc: Doc) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


def _delete(path: list[Any]) -> Callable[[Doc], None]:
    def mutate(doc: Doc) -> None:
        target = doc
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
    return mutate


def _append_task(task: Doc) -> Callable[[Doc], None]:
    return lambda doc: doc["tasks"].append(task)


def _standby_reported_running(doc: Doc) -> None:
    """Client 2 lists 0_1 as previous standby while reporting offset sum -2 (running active) for it."""
    doc["clients"][1]["previous_active"] = []
    doc["clients"][1]["previous_standby"] = ["0_1"]


BAD_INPUTS: list[tuple[str, Callable[[Doc], None], str, str]] = [
    ("unknown top-level key", _set(["extra"], 1), "$.extra", "unknown key 'extra'"),
    ("unknown task key", _set(["tasks", 0, "storez"], []), "$.tasks[0].storez", "unknown key"),
    ("unknown client key", _set(["clients", 0, "thread"], 2), "$.clients[0].thread", "unknown key"),
    ("wrong format", _set(["format"], "taskassign/formats/scenario/v9"), "$.format", "expected"),
    ("wrong type: tasks", _set(["tasks"], {}), "$.tasks", "expected an array"),
    ("wrong type: partition", _set(["tasks", 0, "partitions", 0, "partition"], "0"),
     "$.tasks[0].partitions[0].partition", "expected an integer"),
    ("wrong type: stores", _set(["tasks", 0, "stores"], "s"), "$.tasks[0].stores", "expected an array"),
    ("wrong type: now_ms", _set(["now_ms"], 1.5), "$.now_ms", "expected an integer"),
    ("duplicate task id", _set(["tasks", 1, "id"], "0_0"), "$.tasks[1].id", "duplicate task id"),
    ("task id does not parse", _set(["tasks", 1, "id"], "zero_one"), "$.tasks[1].id", "does not parse"),
    ("duplicate process id", _set(["clients", 1, "process_id"], "00000000-0000-0000-0000-000000000001"),
     "$.clients[1].process_id", "duplicate process id"),
    ("bad uuid", _set(["clients", 0, "process_id"], "client-1"), "$.clients[0].process_id", "not a UUID"),
    ("unknown task in previous_active", _set(["clients", 0, "previous_active"], ["7_7"]),
     "$.clients[0].previous_active[0]", "unknown task"),
    ("unknown task in previous_standby", _set(["clients", 0, "previous_standby"], ["0_9"]),
     "$.clients[0].previous_standby[0]", "unknown task"),
    ("unknown task in offset sums", _set(["clients", 0, "task_offset_sums", "3_3"], 5),
     "$.clients[0].task_offset_sums.3_3", "unknown task"),
    ("unparseable task in offset sums", _set(["clients", 0, "task_offset_sums", "x"], 5),
     "$.clients[0].task_offset_sums.x", "does not parse"),
    ("offset sum for a stateless task", _set(["clients", 0, "task_offset_sums", "1_0"], 5),
     "$.clients[0].task_offset_sums.1_0", "no changelog"),
    ("both previous active and standby", _set(["clients", 0, "previous_standby"], ["0_0"]),
     "$.clients[0].previous_standby", "also in previous_active"),
    ("-2 offset but listed standby", _standby_reported_running, "$.clients[1].task_offset_sums.0_1",
     "RUNNING active"),
    ("no consumers", _set(["clients", 0, "consumers"], []), "$.clients[0].consumers", "at least one consumer"),
    ("neither consumers nor threads", _delete(["clients", 0, "consumers"]), "$.clients[0]", "missing 'consumers'"),
    ("both consumers and threads", _set(["clients", 0, "threads"], 2), "$.clients[0].threads", "not both"),
    ("zero threads", _set(["clients", 1, "threads"], 0), "$.clients[1].threads", "between 1"),
    ("negative offset sum", _set(["clients", 0, "task_offset_sums", "0_1"], -4),
     "$.clients[0].task_offset_sums.0_1", "between 0"),
    ("unknown config", _set(["configs", "num.standbys"], 1), "$.configs.num.standbys", "unknown config key"),
    ("out-of-range config", _set(["configs", "max.warmup.replicas"], 0), "$.configs.max.warmup.replicas", ">= 1"),
    ("config of wrong type", _set(["configs", "acceptable.recovery.lag"], "lots"),
     "$.configs.acceptable.recovery.lag", "expected an integer"),
    ("partition neither source nor changelog", _set(["tasks", 2, "partitions", 0, "source"], False),
     "$.tasks[2].partitions[0]", "source partition, a changelog partition"),
    ("duplicate consumer across clients", _set(["clients", 1], {
        "process_id": "00000000-0000-0000-0000-000000000002", "consumers": ["c1-1"]}),
     "$.clients[1].consumers[0]", "also belongs"),
    ("consumer_previous names unknown consumer", _set(["clients", 0, "consumer_previous"], {"zz": ["0_0"]}),
     "$.clients[0].consumer_previous.zz", "not one of this client's consumers"),
    ("tag missing for configured key", _set(["configs", "rack.aware.assignment.tags"], ["zone"]),
     "$.clients[0].tags", "no such tag"),
    ("too many tags", _set(["clients", 0, "tags"], {str(i): "v" for i in range(6)}), "$.clients[0].tags",
     "at most 5"),
    ("bad host", _set(["clients", 0, "host"], "localhost"), "$.clients[0].host", "host:port"),
    ("mixed named topology ids", _append_task({"id": "t__2_0", "partitions": [
        {"topic": "x", "partition": 0, "source": True}]}), "$.tasks[3].id", "mix named-topology"),
    ("end offset on stateless task", _set(["tasks", 2, "changelog_end_offset_sum"], 7),
     "$.tasks[2].changelog_end_offset_sum", "no changelog partition"),
    ("unknown leader", _set(["leader"], "00000000-0000-0000-0000-000000000009"), "$.leader", "not one of"),
    ("tasks but no clients", _set(["clients"], []), "$.clients", "at least one client"),
    ("two tasks share a partition", _append_task({"id": "5_0", "partitions": [
        {"topic": "x", "partition": 9, "source": True}, {"topic": "in", "partition": 0, "source": True}]}),
     "$.tasks[3].partitions[1]", "also a partition of task 0_0"),
    ("current_assignment unknown client", _set(["current_assignment"], {
        "00000000-0000-0000-0000-000000000009": {"active": [], "standby": []}}),
     "$.current_assignment.00000000-0000-0000-0000-000000000009", "unknown client"),
]


@pytest.mark.parametrize(("case", "mutate", "path", "message"), BAD_INPUTS, ids=[b[0] for b in BAD_INPUTS])
def test_malformed_scenarios_name_the_json_path(
    case: str, mutate: Callable[[Doc], None], path: str, message: str
) -> None:
    doc = scenario_doc()
    mutate(doc)
    with pytest.raises(ScenarioError) as info:
        parse_scenario(doc)
    assert info.value.path == path, str(info.value)
    assert message in info.value.message


def test_bad_json_reports_line_and_column(tmp_path: Path) -> None:
    p = tmp_path / "bad.scenario.json"
    p.write_text('{"format": "taskassign/scenario/v1",\n "tasks": [}\n')
    with pytest.raises(ScenarioError, match=r"line 2, column 12"):
        read_scenario(p)


def test_duplicate_json_keys_are_an_error(tmp_path: Path) -> None:
    p = tmp_path / "dup.scenario.json"
    p.write_text(json.dumps(scenario_doc())[:-1] + ', "name": "again"}')
    with pytest.raises(ScenarioError, match="duplicate key 'name'"):
        read_scenario(p)


def test_threads_shorthand_names_consumers() -> None:
    s = parse_scenario(scenario_doc())
    pid = ProcessId.of_ints(0, 2)
    assert s.state.clients[pid].consumer_client_ids == (f"{pid}-StreamThread-1",)


def test_racks_absent_vs_empty() -> None:
    doc = scenario_doc()
    doc["tasks"][0]["partitions"][0]["racks"] = []
    s = parse_scenario(doc)
    parts = s.state.tasks[TaskId(0, 0)].topic_partitions
    assert parts[1].rack_ids is not None and len(parts[1].rack_ids) == 0  # "in" sorts after "app-..."
    assert parts[0].rack_ids is None


def test_current_assignment_is_read() -> None:
    doc = scenario_doc()
    doc["current_assignment"] = {"00000000-0000-0000-0000-000000000002": {"active": ["0_0"], "standby": ["0_1"]}}
    s = parse_scenario(doc)
    assert s.current_assignment is not None
    a = s.current_assignment[ProcessId.of_ints(0, 2)]
    assert list(a.active_tasks()) == [TaskId(0, 0)] and list(a.standby_tasks()) == [TaskId(0, 1)]
