"""How a client's restore throughput is shared between the stores it is restoring.

Kafka Streams restores active tasks first and updates standbys only while no active is restoring; the
restore consumer reads the changelogs of all restoring tasks together. Over an interval, with a budget
of ``records_per_s x seconds`` records, that is: actives take what they need, fairly split, and the
standbys share what is left. "Fairly split" is water-filling (processor sharing): every store gets an
equal share, a store that needs less than its share takes only what it needs, and the rest is split
again among the others. With integer records, the few records that do not divide evenly go to the
first stores in TaskId order, so the result is deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

__all__ = ("RateCarry", "restore_budget", "share_restore", "water_fill")

K = TypeVar("K")
MS_PER_S = 1_000


def water_fill(budget: int, needs: Sequence[tuple[K, int]]) -> dict[K, int]:
    """Split ``budget`` records fairly over ``needs`` (key, records still needed), keys in priority order.

    Returns the records each key gets (never more than it needs; the total is min(budget, sum of needs)).
    """
    given = {key: 0 for key, _ in needs}
    open_needs = [(key, need) for key, need in needs if need > 0]
    while open_needs and budget > 0:
        share = budget // len(open_needs)
        if share == 0:
            for key, _ in open_needs[:budget]:
                given[key] += 1
            break
        satisfied = [(key, need) for key, need in open_needs if need <= share]
        if satisfied:
            for key, need in satisfied:
                given[key] += need
                budget -= need
            done = {key for key, _ in satisfied}
            open_needs = [(key, need) for key, need in open_needs if key not in done]
            continue
        for key, _ in open_needs:
            given[key] += share
        budget -= share * len(open_needs)
        open_needs = [(key, need - share) for key, need in open_needs]
    return given


def share_restore(budget: int, active_needs: Sequence[tuple[K, int]], standby_needs: Sequence[tuple[K, int]]
                  ) -> dict[K, int]:
    """Actives first (water-filled), then standbys with what is left."""
    for_actives = water_fill(budget, active_needs)
    left = budget - sum(for_actives.values())
    for_standbys = water_fill(left, standby_needs)
    return {**for_actives, **for_standbys}


class RateCarry:
    """Turns a rate (records/s) over intervals in ms into whole records without drift: the sub-record
    remainder of one interval is carried into the next."""

    __slots__ = ("remainder",)

    def __init__(self) -> None:
        self.remainder = 0

    def take(self, records_per_s: int, elapsed_ms: int) -> int:
        total = records_per_s * elapsed_ms + self.remainder
        whole, self.remainder = divmod(total, MS_PER_S)
        return whole


def restore_budget(records_per_s: int, elapsed_ms: int) -> int:
    """Whole records restorable in ``elapsed_ms`` at ``records_per_s`` (no carry)."""
    return records_per_s * elapsed_ms // MS_PER_S
