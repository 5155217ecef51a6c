from __future__ import annotations

import re

import pytest

from taskassign.assignors.state_aware.settings import Settings
from taskassign.configs import AssignmentConfigs
from taskassign.errors import ConfigError


def test_defaults_and_overrides_from_the_configs() -> None:
    assert Settings.from_configs(AssignmentConfigs()) == Settings()
    configs = AssignmentConfigs.from_properties({
        "taskassign.state_aware.balance_tolerance": 0.02, "taskassign.state_aware.balance_trigger": 0.2,
        "taskassign.state_aware.stateless_task_weight": 0, "taskassign.state_aware.movement_cost": 2,
        "taskassign.state_aware.traffic_cost": 0.5, "taskassign.state_aware.count_tolerance": 1,
        "taskassign.state_aware.subtopology_slack": 0,
    })
    assert Settings.from_configs(configs) == Settings(0.02, 0.2, 0.0, 2.0, 0.5, 1.0, 0)


def test_strings_are_parsed_like_kafka_configs() -> None:
    configs = AssignmentConfigs.from_properties({"taskassign.state_aware.traffic_cost": "3.5"}, coerce_strings=True)
    assert Settings.from_configs(configs).traffic_cost == 3.5


@pytest.mark.parametrize(("key", "value", "message"), [
    ("taskassign.state_aware.balance_tolerance", -0.1, "must be >= 0"),
    ("taskassign.state_aware.traffic_cost", "high", "expected a number"),
    ("taskassign.state_aware.subtopology_slack", 1.5, "expected an integer"),
])
def test_bad_values_name_the_key(key: str, value: object, message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(key)) as caught:
        AssignmentConfigs.from_properties({key: value})
    assert message in str(caught.value)


def test_the_trigger_cannot_be_below_the_tolerance() -> None:
    configs = AssignmentConfigs.from_properties({"taskassign.state_aware.balance_tolerance": 0.2})
    with pytest.raises(ConfigError, match=re.escape("taskassign.state_aware.balance_trigger")):
        Settings.from_configs(configs)
