"""Kafka's ``FallbackPriorTaskAssignor``.

What Kafka's leader runs instead of its configured internal assignor when changelog end offsets could
not be fetched (``StreamsPartitionAssignor``'s fallback): the legacy sticky algorithm in "must preserve" mode, so every
previous active goes back to its owner whatever the balance, without rack optimisation, and it always
asks for a probing rebalance so that a proper assignment follows once lags are known.
"""

from __future__ import annotations

from dataclasses import replace

from taskassign.assignors.base import BaseTaskAssignor
from taskassign.assignors.legacy_sticky import legacy_sticky_assignment
from taskassign.model import ApplicationState, TaskAssignment

__all__ = ("FallbackPriorTaskAssignor",)


class FallbackPriorTaskAssignor(BaseTaskAssignor):
    """Previous actives stay put; the rest is placed as LegacySticky would; probing is always requested."""

    name = "fallback_prior"

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        result = legacy_sticky_assignment(application_state, must_preserve_active_task_assignment=True,
                                          rack_aware=False)
        return replace(result, probing_rebalance_needed=True)
