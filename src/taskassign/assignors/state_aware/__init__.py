"""``state_aware``: the assignor that balances state per thread, not task counts (KAFKA-6583), and its
engine: balance state per thread, keep restores and cross-rack reads low, move actives only to
caught-up clients, and explain every move (docs/state-aware.md).

``assignor.StateAwareTaskAssignor`` is the KIP-924 assignor; ``assign.assign_state_aware`` runs the
engine's steps (``problem`` -> ``actives`` / ``flow`` -> ``standbys`` -> ``movement`` -> ``explain``).
"""

from taskassign.assignors.state_aware.assign import assign_state_aware
from taskassign.assignors.state_aware.assignor import StateAwareTaskAssignor
from taskassign.assignors.state_aware.settings import Settings

__all__ = ("Settings", "StateAwareTaskAssignor", "assign_state_aware")
