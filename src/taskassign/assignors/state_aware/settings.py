"""The state-aware assignor's knobs, read from the ``taskassign.assignors.state_aware.*`` configs (docs/configs.md)."""

from __future__ import annotations

from dataclasses import dataclass

from taskassign.configs import (
    STATE_AWARE_BALANCE_TOLERANCE,
    STATE_AWARE_BALANCE_TRIGGER,
    STATE_AWARE_COUNT_TOLERANCE,
    STATE_AWARE_MOVEMENT_COST,
    STATE_AWARE_STATELESS_TASK_WEIGHT,
    STATE_AWARE_SUBTOPOLOGY_SLACK,
    STATE_AWARE_TRAFFIC_COST,
    AssignmentConfigs,
)
from taskassign.errors import ConfigError

__all__ = ("Settings",)


@dataclass(frozen=True, slots=True)
class Settings:
    """What the assignor balances and what a placement costs (docs/state-aware.md explains each).

    Weights are in *units*: one unit is the state of the application's mean stateful task.
    """

    #: When tasks move for balance, a client is brought within this fraction of its share (per thread).
    balance_tolerance: float = 0.05
    #: Nothing moves for balance while every client is within this fraction of its share (>= tolerance).
    balance_trigger: float = 0.08
    #: Weight of a stateless task's active, in units.
    stateless_task_weight: float = 0.1
    #: Cost of restoring one unit of state (the flow's price of a move).
    movement_cost: float = 1.0
    #: Cost of one partition read from another rack.
    traffic_cost: float = 1.0
    #: A client's task count per thread may exceed its even share by this fraction.
    count_tolerance: float = 0.5
    #: Tasks of one subtopology a client may hold beyond its even share.
    subtopology_slack: int = 1

    @classmethod
    def from_configs(cls, configs: AssignmentConfigs) -> Settings:
        tolerance = float(configs.extension(STATE_AWARE_BALANCE_TOLERANCE))
        trigger = float(configs.extension(STATE_AWARE_BALANCE_TRIGGER))
        if trigger < tolerance:
            raise ConfigError(STATE_AWARE_BALANCE_TRIGGER,
                              f"must be >= {STATE_AWARE_BALANCE_TOLERANCE} ({tolerance}), got {trigger}")
        return cls(
            balance_tolerance=tolerance,
            balance_trigger=trigger,
            stateless_task_weight=float(configs.extension(STATE_AWARE_STATELESS_TASK_WEIGHT)),
            movement_cost=float(configs.extension(STATE_AWARE_MOVEMENT_COST)),
            traffic_cost=float(configs.extension(STATE_AWARE_TRAFFIC_COST)),
            count_tolerance=float(configs.extension(STATE_AWARE_COUNT_TOLERANCE)),
            subtopology_slack=int(configs.extension(STATE_AWARE_SUBTOPOLOGY_SLACK)),
        )
