"""taskassign: Kafka Streams task assignment in Python (KIP-924 contract, Kafka's assignors and more)."""

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
