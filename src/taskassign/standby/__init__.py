"""Standby replica placement (KIP-441 load-based, KIP-708 client-tag-aware) for Kafka's internal assignors."""

from taskassign.standby.client_tag_aware import ClientTagAwareStandbyTaskAssignor
from taskassign.standby.factory import StandbyTaskAssignor, choose_standby_assignor
from taskassign.standby.load_based import LoadBasedStandbyTaskAssignor

__all__ = (
    "ClientTagAwareStandbyTaskAssignor",
    "LoadBasedStandbyTaskAssignor",
    "StandbyTaskAssignor",
    "choose_standby_assignor",
)
