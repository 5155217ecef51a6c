"""A classic request (KIP-924's ApplicationState as the Java assignor posts it) becomes a scenario on which the
engine sees the same lags, tasks, clients and configs; malformed requests are ScenarioErrors naming the path."""

from __future__ import annotations

import copy

import pytest

from taskassign.bridge.request import parse_classic_request, request_from_scenario
from taskassign.errors import ScenarioError
from taskassign.formats.scenario import read_scenario
from taskassign.leader.assign import assign_scenario, result_to_document
from tests.bridge.conftest import EXAMPLES, kip924_view

SCENARIOS = sorted((EXAMPLES / "scenarios").glob("*.scenario.json"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.name)
def test_the_request_of_a_scenario_gives_the_same_lags_and_the_same_assignment(path) -> None:
    scenario = kip924_view(path)
    request = request_from_scenario(scenario, "app")
    rebuilt = parse_classic_request(request).scenario
    assert rebuilt.name == "app"
    assert list(rebuilt.state.tasks) == list(scenario.state.tasks)
    assert list(rebuilt.state.clients) == list(scenario.state.clients)
    for pid, client in scenario.state.clients.items():
        other = rebuilt.state.clients[pid]
        assert other.stateful_tasks_to_lag_sums() == client.stateful_tasks_to_lag_sums()
        assert other.previous_active_tasks == client.previous_active_tasks
        assert other.previous_standby_tasks == client.previous_standby_tasks
        assert other.num_processing_threads == client.num_processing_threads
        assert other.rack_id == client.rack_id and dict(other.client_tags) == dict(client.client_tags)
    assert rebuilt.state.configs == scenario.state.configs
    for assignor in ("sticky", "high_availability", "state_aware"):
        ours = result_to_document(assign_scenario(rebuilt, assignor))
        theirs = result_to_document(assign_scenario(scenario, assignor))
        assert ours["clients"] == theirs["clients"], assignor


def test_the_services_settings_lie_over_the_applications_configs() -> None:
    request = request_from_scenario(read_scenario(SCENARIOS[0]), "app")
    request["configs"]["taskassign.state_aware.movement_cost"] = 3
    parsed = parse_classic_request(request, {"num.standby.replicas": 2})
    assert parsed.scenario_document["configs"]["num.standby.replicas"] == 2
    assert parsed.scenario_document["configs"]["taskassign.state_aware.movement_cost"] == 3
    assert parsed.scenario.state.configs.num_standby_replicas == 2


@pytest.mark.parametrize(("mutate", "where"), [
    (lambda r: r.pop("tasks"), "missing required key 'tasks'"),
    (lambda r: r.update(format="other/v1"), "$.format"),
    (lambda r: r["clients"][0].update(process_id="not-a-uuid"), "$.clients[0].process_id"),
    (lambda r: r["clients"][0]["lags"].update({"0_0": -7}), "$.clients[0].lags.0_0"),
    (lambda r: r["clients"][0].update(lags=[1, 2]), "$.clients[0].lags"),
    (lambda r: r["clients"][0].update(previous_active=["9_9"]), "$.clients[0].previous_active[0]"),
    (lambda r: r["assignment_configs"].update({"no.such.config": 1}), "$.assignment_configs.no.such.config"),
])
def test_a_malformed_request_names_the_bad_value(mutate, where) -> None:
    request = request_from_scenario(read_scenario(EXAMPLES / "scenarios" / "two-racks-one-standby.scenario.json"))
    bad = copy.deepcopy(request)
    mutate(bad)
    with pytest.raises(ScenarioError) as caught:
        parse_classic_request(bad)
    assert where in str(caught.value)


def test_a_single_running_active_keeps_its_lag_of_minus_2() -> None:
    request = request_from_scenario(read_scenario(EXAMPLES / "scenarios" / "two-racks-one-standby.scenario.json"))
    request["clients"] = request["clients"][:1]
    client = request["clients"][0]
    for task in request["tasks"]:
        if "max_lag" in task:
            task["max_lag"] = -2
    client["lags"] = {}
    client["previous_active"] = [t["id"] for t in request["tasks"]]
    client["previous_standby"] = []
    rebuilt = parse_classic_request(request).scenario
    lags = next(iter(rebuilt.state.clients.values())).stateful_tasks_to_lag_sums()
    assert lags and set(lags.values()) == {-2}
