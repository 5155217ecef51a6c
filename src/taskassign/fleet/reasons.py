"""The vocabulary of the pipeline's ``errors`` table and application statuses (docs/pipeline.md).

An errors row has an ``effect``: ``rejected`` (the input row was not used; these reconcile with the
manifest's row counts) or ``flagged`` (the application ran, but something about it needs attention).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from taskassign.leader.partition_grouper import INVALID_TOPOLOGY, MISSING_SOURCE_TOPIC

__all__ = (
    "APPLICATION_REJECTED",
    "ASSIGNOR_FAILED",
    "BAD_PROCESS_ID",
    "BAD_TASK_ID",
    "BAD_VALUE",
    "DUPLICATE_KEY",
    "EFFECT_FLAGGED",
    "EFFECT_REJECTED",
    "END_OFFSETS_UNKNOWN",
    "INCOMPLETE_TOPOLOGY",
    "INCONSISTENT_REPORT",
    "INVALID_ASSIGNMENT",
    "INVALID_CONFIG",
    "INVALID_STATE",
    "INVALID_TOPOLOGY",
    "MALFORMED_ROW",
    "MISSING_CLIENT_TAG",
    "MISSING_END_OFFSET",
    "MISSING_SOURCE_TOPIC",
    "MISSING_VALUE",
    "PLUGIN_NOT_ALLOWED",
    "REASON_CODES",
    "STATUSES",
    "STATUS_ASSIGNED",
    "STATUS_INVALID_ASSIGNMENT",
    "STATUS_KEPT_PREVIOUS",
    "STATUS_REJECTED",
    "UNKNOWN_APPLICATION",
    "UNKNOWN_ASSIGNOR",
    "UNKNOWN_MEMBER",
    "UNKNOWN_TASK",
    "UNREFERENCED_TOPIC",
)

EFFECT_REJECTED = "rejected"
EFFECT_FLAGGED = "flagged"

# Rows rejected for what they are.
MALFORMED_ROW = "MALFORMED_ROW"
MISSING_VALUE = "MISSING_VALUE"
BAD_VALUE = "BAD_VALUE"
BAD_TASK_ID = "BAD_TASK_ID"
BAD_PROCESS_ID = "BAD_PROCESS_ID"
DUPLICATE_KEY = "DUPLICATE_KEY"
INVALID_CONFIG = "INVALID_CONFIG"
UNKNOWN_ASSIGNOR = "UNKNOWN_ASSIGNOR"
PLUGIN_NOT_ALLOWED = "PLUGIN_NOT_ALLOWED"
MISSING_CLIENT_TAG = "MISSING_CLIENT_TAG"
INCONSISTENT_REPORT = "INCONSISTENT_REPORT"
MISSING_END_OFFSET = "MISSING_END_OFFSET"
# Rows rejected for what they refer to.
UNKNOWN_APPLICATION = "UNKNOWN_APPLICATION"
UNKNOWN_MEMBER = "UNKNOWN_MEMBER"
UNKNOWN_TASK = "UNKNOWN_TASK"
UNREFERENCED_TOPIC = "UNREFERENCED_TOPIC"
APPLICATION_REJECTED = "APPLICATION_REJECTED"
# Whole applications rejected (on the applications row).
INVALID_STATE = "INVALID_STATE"
INCOMPLETE_TOPOLOGY = "INCOMPLETE_TOPOLOGY"
# Applications flagged.
END_OFFSETS_UNKNOWN = "END_OFFSETS_UNKNOWN"
ASSIGNOR_FAILED = "ASSIGNOR_FAILED"
INVALID_ASSIGNMENT = "INVALID_ASSIGNMENT"

#: Every reason code with its one-line meaning (docs/pipeline.md lists the same).
REASON_CODES: Mapping[str, str] = MappingProxyType({
    MALFORMED_ROW: "a CSV/JSON row or cell does not parse as the column's type, or is not UTF-8 text",
    MISSING_VALUE: "a required column is null or empty",
    BAD_VALUE: "a value is out of range or not in the expected format",
    BAD_TASK_ID: "a task id does not parse as '<subtopology>_<partition>'",
    BAD_PROCESS_ID: "a process id is not a UUID",
    DUPLICATE_KEY: "two rows share the table's key; all of them are rejected",
    INVALID_CONFIG: "an application's configs have an unknown key or a bad value",
    UNKNOWN_ASSIGNOR: "an application's assignor does not resolve",
    PLUGIN_NOT_ALLOWED: "an application's assignor is a plug-in (module:Class, file.py:Class): code, which a run "
                        "loads from data only with --allow-plugins",
    MISSING_CLIENT_TAG: "a member lacks a tag listed in rack.aware.assignment.tags",
    INCONSISTENT_REPORT: "a member reports a task as standby with offset sum -2 (running active)",
    MISSING_END_OFFSET: "a changelog partition has no end offset (the application's lags become unknown)",
    UNKNOWN_APPLICATION: "the row names an application that is not in the applications table",
    UNKNOWN_MEMBER: "the row names a consumer that is not a member of the application",
    UNKNOWN_TASK: "the row names a task the application's topology does not have",
    UNREFERENCED_TOPIC: "no task of the application reads or restores from this topic or partition",
    APPLICATION_REJECTED: "the row's application was rejected (see its applications row)",
    MISSING_SOURCE_TOPIC: "a source topic is missing (Kafka answers INCOMPLETE_SOURCE_TOPIC_METADATA)",
    INVALID_TOPOLOGY: "the topology cannot be grouped into tasks (co-partitioning, repartition sizing)",
    INCOMPLETE_TOPOLOGY: "a subtopologies, repartition_topics or topic_partitions row of the application cannot be "
                         "used: it is not assigned on the rest of its tasks",
    INVALID_STATE: "the application's state as a whole is invalid (e.g. no members, unknown leader)",
    END_OFFSETS_UNKNOWN: "flagged: changelog end offsets are incomplete, every lag is -3",
    ASSIGNOR_FAILED: "flagged: the assignor raised; previous assignment kept, immediate follow-up",
    INVALID_ASSIGNMENT: "flagged: the assignor's output failed Kafka's validation",
})

STATUS_ASSIGNED = "ASSIGNED"
STATUS_KEPT_PREVIOUS = "KEPT_PREVIOUS"
STATUS_INVALID_ASSIGNMENT = "INVALID_ASSIGNMENT"
STATUS_REJECTED = "REJECTED"

#: Every application status with its meaning.
STATUSES: Mapping[str, str] = MappingProxyType({
    STATUS_ASSIGNED: "assigned; Kafka's validation passed",
    STATUS_KEPT_PREVIOUS: "the assignor raised; every client keeps its previous tasks",
    STATUS_INVALID_ASSIGNMENT: "the assignor's output failed validation (Kafka would fail the rebalance)",
    STATUS_REJECTED: "not assigned: the application's input is invalid (see errors)",
})
