"""Kafka's ``StandbyTaskAssignorFactory``: which standby assignor an application gets."""

from __future__ import annotations

from collections.abc import Mapping

from taskassign.configs import AssignmentConfigs
from taskassign.ids import ProcessId
from taskassign.standby.base import StandbyTaskAssignor
from taskassign.standby.client_tag_aware import ClientTagAwareStandbyTaskAssignor, rack_as_tag
from taskassign.standby.load_based import LoadBasedStandbyTaskAssignor

__all__ = ("StandbyTaskAssignor", "choose_standby_assignor")

RACK_TAG = "rack"


def choose_standby_assignor(
    configs: AssignmentConfigs, client_racks: Mapping[ProcessId, str | None] | None = None
) -> StandbyTaskAssignor:
    """Tag-aware over ``rack.aware.assignment.tags`` when tags are configured; else, when the caller
    passes the clients' racks and every client has one, tag-aware with the rack as the only tag; else
    load-based. Kafka's high-availability assignor never passes racks (docs/kafka-differences.md, H2)."""
    if configs.rack_aware_assignment_tags:
        return ClientTagAwareStandbyTaskAssignor(configs.rack_aware_assignment_tags)
    if client_racks is not None and client_racks and all(client_racks.values()):
        return ClientTagAwareStandbyTaskAssignor((RACK_TAG,), rack_as_tag)
    return LoadBasedStandbyTaskAssignor()
