"""``state_aware``: a KIP-924 assignor that balances state per thread, not task counts (KAFKA-6583).

The engine lives beside it in ``taskassign.assignors.state_aware`` (docs/state-aware.md): a sticky target
balanced by state
bytes per thread, spread per subtopology and over racks, placed to restore as little as possible, then
reached under the high-availability rules (actives move only to caught-up clients, warm-ups within
``max.warmup.replicas``, probing rebalances until it converges). Every move is explained in
``TaskAssignment.details["explanations"]``.
"""

from __future__ import annotations

from taskassign.assignors.base import BaseTaskAssignor
from taskassign.assignors.state_aware.assign import assign_state_aware
from taskassign.model import ApplicationState, TaskAssignment

__all__ = ("StateAwareTaskAssignor",)


class StateAwareTaskAssignor(BaseTaskAssignor):
    """Balances state bytes (else store counts) per thread; see the module docstring."""

    name = "state_aware"

    def assign(self, application_state: ApplicationState) -> TaskAssignment:
        return assign_state_aware(application_state)
