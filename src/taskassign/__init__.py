"""taskassign: Kafka Streams task assignment in Python (KIP-924 contract, Kafka's assignors and more).

The names below load on first use (PEP 562), so ``import taskassign`` (and the ``taskassign`` command's start,
``--help`` above all) does not import the engine, numpy and OR-Tools until something needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from taskassign.assignors.base import BaseTaskAssignor, TaskAssignor
    from taskassign.configs import AssignmentConfigs
    from taskassign.errors import TaskassignError, TaskAssignmentException
    from taskassign.formats.scenario import Scenario, read_scenario
    from taskassign.ids import ProcessId, TaskId
    from taskassign.leader.assign import assign_scenario, result_to_document
    from taskassign.leader.run import RebalanceResult, rebalance
    from taskassign.model import (
        ApplicationState,
        AssignedTask,
        AssignmentError,
        KafkaStreamsAssignment,
        KafkaStreamsState,
        TaskAssignment,
        TaskInfo,
        TaskTopicPartition,
    )
    from taskassign.validation import validate_task_assignment

__version__ = "0.1.0"

#: Each exported name and the module that defines it.
_EXPORTS: dict[str, str] = {
    "ApplicationState": "taskassign.model",
    "AssignedTask": "taskassign.model",
    "AssignmentConfigs": "taskassign.configs",
    "AssignmentError": "taskassign.model",
    "BaseTaskAssignor": "taskassign.assignors.base",
    "KafkaStreamsAssignment": "taskassign.model",
    "KafkaStreamsState": "taskassign.model",
    "ProcessId": "taskassign.ids",
    "RebalanceResult": "taskassign.leader.run",
    "Scenario": "taskassign.formats.scenario",
    "TaskAssignment": "taskassign.model",
    "TaskAssignmentException": "taskassign.errors",
    "TaskAssignor": "taskassign.assignors.base",
    "TaskId": "taskassign.ids",
    "TaskInfo": "taskassign.model",
    "TaskTopicPartition": "taskassign.model",
    "TaskassignError": "taskassign.errors",
    "assign_scenario": "taskassign.leader.assign",
    "read_scenario": "taskassign.formats.scenario",
    "rebalance": "taskassign.leader.run",
    "result_to_document": "taskassign.leader.assign",
    "validate_task_assignment": "taskassign.validation",
}

__all__ = (
    "ApplicationState",
    "AssignedTask",
    "AssignmentConfigs",
    "AssignmentError",
    "BaseTaskAssignor",
    "KafkaStreamsAssignment",
    "KafkaStreamsState",
    "ProcessId",
    "RebalanceResult",
    "Scenario",
    "TaskAssignment",
    "TaskAssignmentException",
    "TaskAssignor",
    "TaskId",
    "TaskInfo",
    "TaskTopicPartition",
    "TaskassignError",
    "__version__",
    "assign_scenario",
    "read_scenario",
    "rebalance",
    "result_to_document",
    "validate_task_assignment",
)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(_EXPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
