"""Scenario and group configs as a properties file holds them, and task.assignor.class beside them."""

from __future__ import annotations

import json

import pytest

from taskassign.errors import UserInputError
from taskassign.formats.group import parse_group
from taskassign.formats.scenario import parse_scenario, scenario_to_dict
from tests.helpers import EXAMPLES_DIR, scenario_doc

KAFKA_STICKY = "org.apache.kafka.streams.processor.assignment.assignors.StickyTaskAssignor"


def test_scenario_configs_take_kafka_strings_and_keep_typed_values() -> None:
    doc = scenario_doc()
    doc["configs"] = {"num.standby.replicas": "1", "taskassign.kafka.compat": "true",
                      "rack.aware.assignment.strategy": "min_traffic", "acceptable.recovery.lag": " 5000 ",
                      "rack.aware.assignment.traffic_cost": "null",
                      "task.assignor.class": KAFKA_STICKY}
    scenario = parse_scenario(doc)
    configs = scenario.state.configs
    assert (configs.num_standby_replicas, configs.kafka_compat, configs.acceptable_recovery_lag) == (1, True, 5000)
    assert configs.rack_aware_assignment_strategy == "min_traffic" and configs.rack_aware_traffic_cost is None
    # the assignor's configure() gets typed values, and the assignor's class survives a round trip
    assert scenario.raw_configs["num.standby.replicas"] == 1 and scenario.raw_configs["taskassign.kafka.compat"] is True
    assert scenario_to_dict(scenario)["configs"]["task.assignor.class"].endswith("StickyTaskAssignor")


def test_tags_as_a_comma_list() -> None:
    doc = scenario_doc()
    doc["configs"]["rack.aware.assignment.tags"] = "zone, cell"
    for client in doc["clients"]:
        client["tags"] = {"zone": "z1", "cell": "c1"}
    assert parse_scenario(doc).state.configs.rack_aware_assignment_tags == ("zone", "cell")


@pytest.mark.parametrize(("key", "value", "message"), [
    ("num.standby.replicas", "one", "expected an integer, got 'one'"),
    ("taskassign.kafka.compat", "yes", "expected true or false"),
    ("task.assignor.class", "", "expected a class name"),
])
def test_bad_strings_name_the_key(key: str, value: str, message: str) -> None:
    doc = scenario_doc()
    doc["configs"][key] = value
    with pytest.raises(UserInputError) as caught:
        parse_scenario(doc)
    assert f"$.configs.{key}" in str(caught.value) and message in str(caught.value)


def test_group_configs_take_kafka_strings() -> None:
    doc = json.loads((EXAMPLES_DIR / "groups" / "orders-app.group.json").read_text())
    doc["configs"] = {"num.standby.replicas": "1", "task.assignor.class": "sticky"}
    spec = parse_group(doc)
    assert spec.configs.num_standby_replicas == 1 and spec.raw_configs["task.assignor.class"] == "sticky"
