"""A classic scenario under the streams protocol (streams_protocol.classic), field by field, and the answer
back in the classic shape."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from taskassign.errors import UserInputError
from taskassign.formats.scenario import Scenario, parse_scenario, read_scenario
from taskassign.leader.streams import streams_rebalance
from taskassign.model import AssignmentError
from taskassign.streams_protocol.classic import classic_group_assignment, scenario_to_streams_group
from taskassign.streams_protocol.format import read_streams_group
from taskassign.streams_protocol.model import GroupMember, MemberAssignment, StreamsGroupAssignment, task_map
from tests.helpers import EXAMPLES_DIR, scenario_doc

PID_1 = "00000000-0000-0000-0000-000000000001"
PID_2 = "00000000-0000-0000-0000-000000000002"


def scenario(doc: dict[str, Any] | None = None) -> Scenario:
    return parse_scenario(doc or scenario_doc())


def members(s: Scenario) -> dict[str, GroupMember]:
    return {m.member_id: m for m in scenario_to_streams_group(s).members}


def offsets(member: GroupMember) -> dict[str, dict[int, int]]:
    return {s: dict(o) for s, o in member.task_offsets.items()}


def test_topology_configs_and_member_order() -> None:
    group = scenario_to_streams_group(scenario(), "balanced")
    assert [(s.id, s.partitions, s.stateful) for s in group.subtopologies] == [("0", 2, True), ("1", 1, False)]
    assert dict(group.configs) == {"num.standby.replicas": "1"}
    assert group.assignor == "balanced" and group.name == "minimal"
    assert [(m.member_id, m.process_id) for m in group.members] == [
        ("c1-1", PID_1), ("c1-2", PID_1), (f"{PID_2}-StreamThread-1", PID_2)]


def test_previous_tasks_are_dealt_to_threads_without_consumer_previous() -> None:
    by_id = members(scenario())
    # client 1 ran 0_0 and 1_0 as actives and has state for 0_1 (a previous standby): dealt in TaskId order,
    # actives first, each to the thread with the fewest so far
    assert by_id["c1-1"].active_tasks == task_map([("0", 0)])
    assert by_id["c1-2"].active_tasks == task_map([("1", 0)])
    assert by_id["c1-1"].standby_tasks == task_map([("0", 1)])
    assert offsets(by_id["c1-1"]) == {"0": {0: 100, 1: 40}}  # -2: caught up, the end offset sum
    assert offsets(by_id["c1-2"]) == {}
    assert {s: dict(o) for s, o in by_id["c1-1"].task_end_offsets.items()} == {"0": {0: 100, 1: 50}}
    other = by_id[f"{PID_2}-StreamThread-1"]
    assert other.active_tasks == task_map([("0", 1)]) and offsets(other) == {"0": {1: 50}}


def test_consumer_previous_decides_and_unlisted_state_is_offsets_only() -> None:
    doc = scenario_doc()
    doc["clients"][0]["consumer_previous"] = {"c1-2": ["0_0"]}
    by_id = members(scenario(doc))
    assert by_id["c1-2"].active_tasks == task_map([("0", 0)])
    # 1_0, an unlisted previous active, is dealt (c1-1 has fewest); 0_1, unlisted standby state: offsets only
    assert by_id["c1-1"].active_tasks == task_map([("1", 0)])
    assert by_id["c1-1"].standby_tasks == task_map([])
    assert offsets(by_id["c1-1"]) == {"0": {1: 40}}
    assert offsets(by_id["c1-2"]) == {"0": {0: 100}}


@pytest.mark.parametrize(("reported", "end", "expected"), [
    (-2, 100, 100), (-3, 100, None), (40, 100, 40), (150, 100, 0), (0, 100, 0), (40, -3, 40), (-2, -3, None)])
def test_offsets_a_member_would_report(reported: int, end: int, expected: int | None) -> None:
    doc = scenario_doc()
    doc["tasks"][1]["changelog_end_offset_sum"] = end
    doc["clients"][0]["task_offset_sums"] = {"0_1": reported}
    doc["clients"][0]["previous_active"] = ["0_0", "1_0"] if reported != -2 else ["0_0", "1_0", "0_1"]
    if reported == -2:
        doc["clients"][1]["previous_active"] = []
        doc["clients"][1]["task_offset_sums"] = {}
    by_id = members(scenario(doc))
    got = {p: o for c in ("c1-1", "c1-2") for p, o in by_id[c].task_offsets.get("0", {}).items()}
    assert got.get(1) == expected


def test_named_topologies_gaps_and_mixed_statefulness_do_not_convert() -> None:
    doc = scenario_doc()
    doc["tasks"] = [t for t in doc["tasks"] if t["id"] != "0_0"]
    for c in doc["clients"]:
        c["previous_active"] = [t for t in c["previous_active"] if t != "0_0"]
        c["task_offset_sums"] = {t: v for t, v in c["task_offset_sums"].items() if t != "0_0"}
    with pytest.raises(UserInputError, match="subtopology 0 has no task 0_0"):
        scenario_to_streams_group(scenario(doc))
    doc = scenario_doc()
    doc["tasks"][1]["stores"] = []
    doc["tasks"][1]["partitions"] = doc["tasks"][1]["partitions"][:1]
    del doc["tasks"][1]["changelog_end_offset_sum"]
    doc["clients"][0]["task_offset_sums"] = {"0_0": -2}
    doc["clients"][1]["task_offset_sums"] = {}
    with pytest.raises(UserInputError, match="statefulness per subtopology"):
        scenario_to_streams_group(scenario(doc))
    doc = scenario_doc()
    for t in doc["tasks"]:
        t["id"] = "app__" + t["id"]
    for c in doc["clients"]:
        c["previous_active"] = ["app__" + t for t in c["previous_active"]]
        c["task_offset_sums"] = {"app__" + t: v for t, v in c["task_offset_sums"].items()}
    with pytest.raises(UserInputError, match="no named topologies"):
        scenario_to_streams_group(scenario(doc))


def test_the_answer_in_classic_form() -> None:
    group = scenario_to_streams_group(scenario())
    answer = StreamsGroupAssignment({
        "c1-1": MemberAssignment(task_map([("0", 0)]), task_map([])),
        "c1-2": MemberAssignment(task_map([("1", 0)]), task_map([])),
        f"{PID_2}-StreamThread-1": MemberAssignment(task_map([("0", 1)]), task_map([("0", 0)])),
    })
    classic = classic_group_assignment(group, answer)
    assert {str(p): [str(t) for t in a.active_tasks()] for p, a in classic.clients.items()} == {
        PID_1: ["0_0", "1_0"], PID_2: ["0_1"]}
    assert [str(t) for t in classic.clients[next(iter(classic.clients))].standby_tasks()] == []
    assert classic.consumers is not None
    shares = {c: s for per in classic.consumers.values() for c, s in per.items()}
    assert [str(t) for t in shares["c1-2"].active] == ["1_0"]
    assert [str(t) for t in shares[f"{PID_2}-StreamThread-1"].standby] == ["0_0"]


def test_a_group_that_did_not_come_from_a_scenario_has_no_classic_form() -> None:
    group = scenario_to_streams_group(scenario())
    strange = replace(group, members=(replace(group.members[0], process_id="p0"),))
    answer = StreamsGroupAssignment({group.members[0].member_id: MemberAssignment()})
    with pytest.raises(UserInputError, match="not a UUID"):
        classic_group_assignment(strange, answer)


@pytest.mark.parametrize("assignor", ["streams_sticky", "streams_balanced"])
def test_streams_rebalance_is_valid_and_complete(assignor: str) -> None:
    result = streams_rebalance(scenario(), assignor)
    assert result.assignor == assignor
    assert result.error is AssignmentError.NONE and result.completeness.is_complete
    assert result.probing_rebalance_needed is False
    assert result.group.consumers is not None
    assert sum(len(s.active) for per in result.group.consumers.values() for s in per.values()) == 3


def test_sticky_keeps_each_thread_on_its_previous_tasks() -> None:
    doc = scenario_doc()
    doc["clients"][0]["consumer_previous"] = {"c1-1": ["0_0"], "c1-2": ["1_0"]}
    result = streams_rebalance(scenario(doc), "streams_sticky")
    assert result.group.consumers is not None
    shares = {c: s for per in result.group.consumers.values() for c, s in per.items()}
    assert [str(t) for t in shares["c1-1"].active] == ["0_0"]
    assert [str(t) for t in shares["c1-2"].active] == ["1_0"]
    assert [str(t) for t in shares[f"{PID_2}-StreamThread-1"].active] == ["0_1"]


def test_the_shipped_streams_group_example_is_the_converted_scenario() -> None:
    example = EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json"
    converted = scenario_to_streams_group(read_scenario(example))
    shipped = read_streams_group(EXAMPLES_DIR / "streams-groups" / "two-racks-one-standby.streams-group.json")
    assert shipped == converted
