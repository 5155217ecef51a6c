from __future__ import annotations

import pytest

from taskassign.configs import UNBOUNDED_RECOVERY_LAG, AssignmentConfigs
from taskassign.errors import ConfigError


def test_defaults_are_kafkas() -> None:
    configs = AssignmentConfigs.from_properties({})
    assert configs.acceptable_recovery_lag == 10_000
    assert configs.max_warmup_replicas == 2
    assert configs.num_standby_replicas == 0
    assert configs.probing_rebalance_interval_ms == 600_000
    assert configs.rack_aware_assignment_strategy == "none"
    assert configs.rack_aware_assignment_tags == ()
    assert configs.rack_aware_traffic_cost is None and configs.rack_aware_non_overlap_cost is None
    assert configs.kafka_compat is False
    assert configs == AssignmentConfigs()


@pytest.mark.parametrize(
    ("props", "key", "message"),
    [
        ({"max.warmup.replicas": 0}, "max.warmup.replicas", ">= 1"),
        ({"acceptable.recovery.lag": -1}, "acceptable.recovery.lag", ">= 0"),
        ({"probing.rebalance.interval.ms": 59_999}, "probing.rebalance.interval.ms", ">= 60000"),
        ({"num.standby.replicas": -1}, "num.standby.replicas", ">= 0"),
        ({"rack.aware.assignment.strategy": "fastest"}, "rack.aware.assignment.strategy", "one of"),
        ({"rack.aware.assignment.tags": ["a", "b", "c", "d", "e", "f"]}, "rack.aware.assignment.tags", "at most 5"),
        ({"rack.aware.assignment.tags": "zone"}, "rack.aware.assignment.tags", "list of strings"),
        ({"rack.aware.assignment.traffic_cost": -5}, "rack.aware.assignment.traffic_cost", ">= 0"),
        ({"num.standby.replicas": 1.5}, "num.standby.replicas", "integer"),
        ({"num.standby.replicas": True}, "num.standby.replicas", "integer"),
        ({"max.warmup.replicas": 2**31}, "max.warmup.replicas", "Java int"),
        ({"num.standby": 1}, "num.standby", "unknown config"),
        ({"taskassign.kafka.compat": "yes"}, "taskassign.kafka.compat", "true or false"),
    ],
)
def test_bad_values_name_the_key(props: dict[str, object], key: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        AssignmentConfigs.from_properties(props)
    assert info.value.key == key


def test_long_max_recovery_lag_is_accepted() -> None:
    configs = AssignmentConfigs.from_properties({"acceptable.recovery.lag": UNBOUNDED_RECOVERY_LAG})
    assert configs.acceptable_recovery_lag == 2**63 - 1


def test_string_values_are_coerced_when_asked() -> None:
    configs = AssignmentConfigs.from_properties(
        {"num.standby.replicas": "2", "rack.aware.assignment.tags": "zone, cluster",
         "rack.aware.assignment.traffic_cost": "null", "taskassign.kafka.compat": "true"},
        coerce_strings=True,
    )
    assert configs.num_standby_replicas == 2
    assert configs.rack_aware_assignment_tags == ("zone", "cluster")
    assert configs.rack_aware_traffic_cost is None
    assert configs.kafka_compat is True


def test_properties_round_trip() -> None:
    configs = AssignmentConfigs.from_properties({"num.standby.replicas": 2, "taskassign.kafka.compat": True,
                                                 "rack.aware.assignment.tags": ["zone"]})
    assert AssignmentConfigs.from_properties(configs.to_properties()) == configs


def test_direct_construction_validates() -> None:
    with pytest.raises(ConfigError, match=r"max\.warmup\.replicas"):
        AssignmentConfigs(max_warmup_replicas=0)
