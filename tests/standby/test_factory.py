"""StandbyTaskAssignorFactory (Kafka's ``StandbyTaskAssignorFactory.create``)."""

from __future__ import annotations

from taskassign.configs import AssignmentConfigs
from taskassign.standby import ClientTagAwareStandbyTaskAssignor, LoadBasedStandbyTaskAssignor, choose_standby_assignor
from tests.helpers import PID_1, PID_2


def test_tags_configured_means_tag_aware() -> None:
    chosen = choose_standby_assignor(AssignmentConfigs(rack_aware_assignment_tags=("zone",)), {PID_1: "r1"})
    assert isinstance(chosen, ClientTagAwareStandbyTaskAssignor) and chosen.tag_keys == ("zone",)


def test_valid_client_racks_without_tags_means_rack_as_tag() -> None:
    chosen = choose_standby_assignor(AssignmentConfigs(), {PID_1: "r1", PID_2: "r2"})
    assert isinstance(chosen, ClientTagAwareStandbyTaskAssignor) and chosen.tag_keys == ("rack",)


def test_otherwise_load_based() -> None:
    assert isinstance(choose_standby_assignor(AssignmentConfigs()), LoadBasedStandbyTaskAssignor)
    assert isinstance(choose_standby_assignor(AssignmentConfigs(), {PID_1: "r1", PID_2: None}),
                      LoadBasedStandbyTaskAssignor)
