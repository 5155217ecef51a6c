"""What the local searches over actives and standbys share: the two move kinds, run to a fixed point.

A search makes *repair* moves (a client over its trigger band, or a cap, gives tasks away) and *pull*
moves (a client below its trigger band takes tasks), each lowering the total distance of the clients to
their bounds, until a pass makes none. Run in ``dry_run`` mode the same code answers whether any move
exists: a previous assignment without one is settled and kept as it is.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from taskassign.assignors.state_aware.bins import EPSILON, MOVE_OVERHEAD

__all__ = ("LocalSearch", "pull_key")


class LocalSearch(ABC):
    """Repair and pull passes until neither moves anything."""

    @abstractmethod
    def repair(self, dry_run: bool = False) -> int:
        """Make (or, with ``dry_run``, find one of) the repair moves; returns how many."""

    @abstractmethod
    def pull(self, dry_run: bool = False) -> int:
        """Make (or find one of) the pull moves; returns how many."""

    def improvable(self) -> bool:
        return self.repair(dry_run=True) > 0 or self.pull(dry_run=True) > 0

    def run(self, max_passes: int = 100) -> None:
        for _ in range(max_passes):
            if self.repair() + self.pull() == 0:
                return


def pull_key(extra_cost: float, weight: float, gap: float, task: int) -> tuple[float, int, float, int]:
    """How good a task is for a client below its share to take (smaller is better): the extra cost per
    unit of weight (each move costing at least MOVE_OVERHEAD), then tasks that fit the client's gap,
    largest first, then the smallest of the others."""
    fills = weight <= gap + EPSILON
    return (round((extra_cost + MOVE_OVERHEAD) / weight, 9), 0 if fills else 1, -weight if fills else weight, task)
