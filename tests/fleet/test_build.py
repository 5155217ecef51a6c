from __future__ import annotations

import pytest

from taskassign.errors import ConfigError, TaskassignError, UserInputError
from taskassign.fleet.build import build_scenario
from taskassign.formats.scenario import Scenario, parse_scenario, scenario_to_dict
from taskassign.ids import ProcessId, TaskId
from tests.fleet.inputs import PID_A, PID_B, app_input, block, client, reported


def assert_round_trips(scenario: Scenario) -> None:
    """What export-scenario writes parses back to the very Scenario the pipeline assigned."""
    again = parse_scenario(scenario_to_dict(scenario))
    assert again.name == scenario.name
    assert again.state.tasks == scenario.state.tasks
    assert again.state.clients == scenario.state.clients
    assert again.state.configs == scenario.state.configs
    assert again.state.now_ms == scenario.state.now_ms
    assert dict(again.raw_configs) == dict(scenario.raw_configs)
    assert again.leader == scenario.leader


def test_builds_the_state_the_rows_describe() -> None:
    built = build_scenario(app_input(configs={"num.standby.replicas": "1"}))  # type: ignore[arg-type]
    state = built.scenario.state
    assert built.scenario.name == "app"
    assert state.configs.num_standby_replicas == 1
    assert state.now_ms == 1_000
    assert [str(t) for t in state.task_ids] == ["0_0", "0_1", "1_0"]
    assert state.changelog_end_offset_sums == {TaskId(0, 0): 100, TaskId(0, 1): 100}
    a, b = state.clients[ProcessId(PID_A)], state.clients[ProcessId(PID_B)]
    assert a.num_processing_threads == 2
    assert list(a.previous_active_tasks) == [TaskId(0, 0), TaskId(1, 0)]
    assert list(b.previous_standby_tasks) == [TaskId(0, 0)]
    assert b.lag_for(TaskId(0, 0)) == 40
    assert a.consumer_previous_tasks == {"a-1": {TaskId(0, 0), TaskId(1, 0)}}
    assert built.scenario.raw_configs["num.standby.replicas"] == 1
    assert_round_trips(built.scenario)


def test_racks_tags_hosts_state_bytes_and_leader_round_trip() -> None:
    record = app_input(
        subtopologies=[block(0, 2, racks=[["r1", "r2"], []], state_bytes=[5_000, None]), block(1, 1, stateful=False)],
        clients=[client(PID_A, rack="r1", tags={"zone": "z1"}, host="a.svc:7070",
                        tasks=[reported(0, 0, "active", -2, -2)]),
                 client(PID_B, rack="r2", tags={"zone": "z2"}, tasks=[reported(0, 1, "standby", -3, -3)])],
        configs={"rack.aware.assignment.tags": "zone", "num.standby.replicas": "1"},
        leader_process_id=PID_B,
    )
    scenario = build_scenario(record).scenario  # type: ignore[arg-type]
    info = scenario.state.tasks[TaskId(0, 0)]
    assert info.state_bytes == 5_000
    assert set(info.source_partitions[0].rack_ids or ()) == {"r1", "r2"}
    assert scenario.state.tasks[TaskId(0, 1)].source_partitions[0].rack_ids == set()
    assert scenario.state.tasks[TaskId(1, 0)].source_partitions[0].rack_ids is None
    assert scenario.leader == ProcessId(PID_B)
    assert scenario.state.clients[ProcessId(PID_A)].host_info == "a.svc:7070"
    assert_round_trips(scenario)


def test_unknown_end_offsets_and_kafka_compat() -> None:
    record = app_input(subtopologies=[block(0, 2, ends=[-3, -3]), block(1, 1, stateful=False)],
                       clients=[client(PID_A, tasks=[reported(0, 0, "active", -2, -2)]),
                                client(PID_B, tasks=[reported(0, 0, "standby", 60, -3)])],
                       end_offsets_known=False)
    scenario = build_scenario(record, kafka_compat=True).scenario  # type: ignore[arg-type]
    assert not scenario.state.lag_computation_successful
    assert scenario.state.configs.kafka_compat
    assert_round_trips(scenario)


@pytest.mark.parametrize(("change", "message"), [
    ({"clients": []}, "has no members"),
    ({"subtopologies": []}, "has no tasks"),
    ({"leader_process_id": "00000000-0000-0000-0000-000000000099"}, "is not a client"),
    ({"leader_process_id": "not-a-uuid"}, "not a UUID"),
])
def test_invalid_applications_raise_user_errors(change: dict[str, object], message: str) -> None:
    with pytest.raises(UserInputError, match=message):
        build_scenario(app_input(**change))  # type: ignore[arg-type]


def test_bad_configs_raise_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"num\.standby\.replicas"):
        build_scenario(app_input(configs={"num.standby.replicas": "-1"}))  # type: ignore[arg-type]


def test_grouper_shorter_source_topics_and_source_changelogs() -> None:
    table = {"topic": "table-in", "is_source": True, "is_changelog": True, "num_partitions": 2,
             "racks": [["r1"], ["r2"], None]}
    other = {"topic": "other-in", "is_source": True, "is_changelog": False, "num_partitions": 3, "racks": None}
    sub = {"subtopology": 0, "num_tasks": 3, "stores": ["table"], "topics": [table, other],
           "end_offset_sums": [5, 6, 0], "state_bytes": [1, 2, None]}
    state = build_scenario(app_input(subtopologies=[sub], clients=[client(PID_A)])).scenario.state  # type: ignore[arg-type]
    first, last = state.tasks[TaskId(0, 0)], state.tasks[TaskId(0, 2)]
    assert [(p.topic, p.is_source, p.is_changelog) for p in first.topic_partitions] == [
        ("other-in", True, False), ("table-in", True, True)]
    # task 2: the 2-partition source-changelog topic has no partition 2 to read, but its changelog
    # partition 2 is still the task's (committed offset 0).
    assert [(p.topic, p.is_source, p.is_changelog) for p in last.topic_partitions] == [
        ("other-in", True, False), ("table-in", False, True)]
    assert last.changelog_end_offset_sum == 0 and last.state_bytes is None
    assert first.changelog_partitions[0].rack_ids == {"r1"}


def test_a_lag_that_differs_from_the_engines_is_a_bug() -> None:
    record = app_input(clients=[client(PID_A, tasks=[reported(0, 0, "standby", 60, 41)])])
    with pytest.raises(TaskassignError, match="differs from the engine's 40"):
        build_scenario(record)  # type: ignore[arg-type]


def test_reports_for_unknown_tasks_or_without_changelog_are_rejected() -> None:
    unknown = app_input(clients=[client(PID_A, tasks=[reported(7, 0, "active")])])
    with pytest.raises(UserInputError, match="unknown task 7_0"):
        build_scenario(unknown)  # type: ignore[arg-type]
    stateless = app_input(clients=[client(PID_A, tasks=[reported(1, 0, "standby", 5)])])
    with pytest.raises(UserInputError, match="no changelog"):
        build_scenario(stateless)  # type: ignore[arg-type]
    running_standby = app_input(clients=[client(PID_A, tasks=[reported(0, 0, "standby", -2)])])
    with pytest.raises(UserInputError, match="ownership 'standby'"):
        build_scenario(running_standby)  # type: ignore[arg-type]


def test_a_clients_tasks_in_any_order_build_the_same_state() -> None:
    """Records list a client's tasks in TaskId order (built without sorting again); any other order, or a
    task listed twice, gives the same state as that order."""
    tasks = [reported(0, 0, "active", offset=60, lag=40, consumers=["a-1"]),
             reported(0, 1, "standby", offset=90, lag=10, consumers=["a-2"]),
             reported(1, 0, "active", consumers=["a-1"])]
    subtopologies = [block(0, 2), block(1, 1, stateful=False)]

    def state(listed: list[dict[str, object]]) -> object:
        record = app_input(subtopologies=subtopologies,
                           clients=[client(PID_A, threads=2, tasks=[dict(t) for t in listed])])
        return build_scenario(record).scenario.state.clients[ProcessId(PID_A)]  # type: ignore[arg-type]

    ordered = state(tasks)
    assert state(list(reversed(tasks))) == ordered
    assert repr(state(list(reversed(tasks)))) == repr(ordered)
    assert state([*tasks, tasks[0]]) == ordered


@pytest.mark.parametrize(("sub", "part"), [(0, 2), (0, -1), (5, 0), (1, 1), (0, None), (0, "1")])
def test_reports_past_a_subtopologys_tasks_are_unknown(sub: object, part: object) -> None:
    """A report is found through its subtopology's ids: a partition past them, negative, or of no number type
    names the task it asked for, as a lookup in the task map would."""
    record = app_input(clients=[client(PID_A, tasks=[reported(sub, part, "active")])])  # type: ignore[arg-type]
    with pytest.raises(UserInputError, match=rf"reports unknown task {sub}_{part}$"):
        build_scenario(record)  # type: ignore[arg-type]


def test_a_partition_of_another_number_type_finds_its_task() -> None:
    """A partition given as a float or bool equal to an int finds that task, with its lag checked (as the task
    map's key lookup always did)."""
    tasks = [reported(0, 1.0, "standby", offset=90, lag=10), reported(1, False, "active")]  # type: ignore[arg-type]
    state = build_scenario(app_input(clients=[client(PID_A, tasks=tasks)])).scenario.state  # type: ignore[arg-type]
    a = state.clients[ProcessId(PID_A)]
    assert list(a.previous_standby_tasks) == [TaskId(0, 1)] and list(a.previous_active_tasks) == [TaskId(1, 0)]
    assert a.task_offset_sums == {TaskId(0, 1): 90}
    bad = [reported(0, 1.0, "standby", offset=90, lag=11)]  # type: ignore[arg-type]
    with pytest.raises(TaskassignError, match="lag 11 differs from the engine's 10"):
        build_scenario(app_input(clients=[client(PID_A, tasks=bad)]))  # type: ignore[arg-type]


def test_shared_task_ids_handed_out_never_change() -> None:
    """The shared ids of a subtopology grow for a larger application, but a list handed out keeps its length
    (a subtopology's index reads it as its number of tasks: a report past it is an unknown task)."""
    from taskassign.fleet import build

    small = build._task_ids(907, 3)
    large = build._task_ids(907, 5)
    again = build._task_ids(907, 3)
    assert small == [TaskId(907, p) for p in range(3)] and len(small) == 3
    assert large == [TaskId(907, p) for p in range(5)] and again == small
    assert all(a is b for a, b in zip(large, small, strict=False))
    record = app_input(subtopologies=[block(907, 3)],
                       clients=[client(PID_A, tasks=[reported(907, 3, "active")])])
    with pytest.raises(UserInputError, match="unknown task 907_3"):
        build_scenario(record)  # type: ignore[arg-type]


def test_an_empty_repeat_of_a_subtopology_leaves_its_tasks_reportable() -> None:
    """A subtopology listed again without tasks adds none and takes none away: reports of its tasks still
    find them (as in the task map), with their lags checked."""
    record = app_input(subtopologies=[block(0, 2), block(0, 0), block(1, 1, stateful=False)],
                       clients=[client(PID_A, tasks=[reported(0, 1, "standby", 60, 40)])])
    state = build_scenario(record).scenario.state  # type: ignore[arg-type]
    assert state.clients[ProcessId(PID_A)].task_offset_sums == {TaskId(0, 1): 60}
    assert list(state.changelog_end_offset_sums) == [TaskId(0, 0), TaskId(0, 1)]


def test_applications_with_the_same_configs_share_them_and_bad_ones_still_fail() -> None:
    """Text configs are parsed once per distinct set (the value is immutable); others, and bad ones, every time."""
    one = build_scenario(app_input(configs={"num.standby.replicas": "1"})).scenario.state  # type: ignore[arg-type]
    two = build_scenario(app_input("b", configs={"num.standby.replicas": "1"})).scenario.state  # type: ignore[arg-type]
    assert one.configs is two.configs and one.configs.num_standby_replicas == 1
    other = build_scenario(app_input(configs={"num.standby.replicas": "2"})).scenario.state  # type: ignore[arg-type]
    assert other.configs.num_standby_replicas == 2
    record = app_input(configs={})
    record["configs"] = [("num.standby.replicas", 1)]
    assert build_scenario(record).scenario.state.configs.num_standby_replicas == 1  # type: ignore[arg-type]
    for _ in range(2):
        with pytest.raises(ConfigError, match=r"num\.standby\.replicas"):
            build_scenario(app_input(configs={"num.standby.replicas": "-1"}))  # type: ignore[arg-type]
