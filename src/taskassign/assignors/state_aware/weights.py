"""How much each task weighs when balancing: its state, else its stores, or a fixed stateless weight.

Kafka counts every task as 1 (KAFKA-6583, the rejected KIP-262). Here a task's *state weight* is its
``state_bytes`` when the scenario gives them, else its number of state stores. When some tasks give
bytes and others do not, a task without bytes is given the mean bytes per store of those that do, so
that one application is never measured in two units. Weights are then expressed in *units*: one unit
is the mean state weight of the stateful tasks, so the knobs (stateless weight, movement cost) mean
the same whatever the application's size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from taskassign.model import TaskInfo

__all__ = ("TaskWeights", "task_weights")


@dataclass(frozen=True, slots=True)
class TaskWeights:
    """Per task (in the order the tasks were given): state weight and active weight, in units."""

    #: ``bytes`` when weights come from ``state_bytes``, ``stores`` when from store counts.
    mode: Literal["bytes", "stores"]
    #: Raw size of one unit (bytes or stores): the mean state weight of the stateful tasks.
    unit: float
    #: State held by a replica of the task (active or standby), in units; 0 without stores.
    state: tuple[float, ...]
    #: Weight of the task's active: its state, or the stateless weight for a task without stores.
    active: tuple[float, ...]

    def raw(self, units: float) -> float:
        """``units`` in bytes or stores."""
        return units * self.unit

    def describe(self, units: float) -> str:
        """``units`` as text: ``1.2 GB`` or ``3.0 stores``."""
        raw = self.raw(units)
        if self.mode == "stores":
            return f"{raw:.1f} stores"
        for suffix, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
            if raw >= size:
                return f"{raw / size:.1f} {suffix}"
        return f"{raw:.0f} B"


def task_weights(tasks: Sequence[TaskInfo], stateless_task_weight: float) -> TaskWeights:
    """The weights of ``tasks``; see the module docstring for the rules."""
    given = [(info.state_bytes, len(info.state_store_names)) for info in tasks
             if info.is_stateful and info.state_bytes is not None]
    mode: Literal["bytes", "stores"] = "bytes" if any(b for b, _ in given) else "stores"
    raw: list[float] = []
    if mode == "bytes":
        per_store = sum(b for b, _ in given if b is not None) / max(1, sum(n for _, n in given))
        for info in tasks:
            if not info.is_stateful:
                raw.append(0.0)
            elif info.state_bytes is not None:
                raw.append(float(info.state_bytes))
            else:
                raw.append(per_store * len(info.state_store_names))
    else:
        raw = [float(len(info.state_store_names)) for info in tasks]
    positive = [w for w, info in zip(raw, tasks, strict=True) if info.is_stateful and w > 0]
    unit = sum(positive) / len(positive) if positive else 1.0
    state = tuple(w / unit for w in raw)
    active = tuple(s if info.is_stateful else stateless_task_weight for s, info in zip(state, tasks, strict=True))
    return TaskWeights(mode, unit, state, active)
