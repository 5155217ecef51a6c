"""The state-aware assignor's engine: balance state per thread, keep restores and cross-rack reads low,
move actives only to caught-up clients, and explain every move (docs/state-aware.md)."""

from taskassign.state_aware.assign import assign_state_aware
from taskassign.state_aware.settings import Settings

__all__ = ("Settings", "assign_state_aware")
