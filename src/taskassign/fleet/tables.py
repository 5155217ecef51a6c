"""The fleet snapshot's tables: names, columns, types, keys; one definition for every reader and writer.

A fleet snapshot is a directory with one table per name below, each as Parquet, CSV or JSON lines
(docs/pipeline.md). The Spark pipeline builds its schemas from these specs, the fleet generator writes
them, and the docs test checks that docs/pipeline.md describes every column. Column types use Spark's
DDL spelling (``string``, ``int``, ``long``, ``array<string>``, ``map<string,string>``...). In CSV files
array and map cells hold JSON text (``["rack-a","rack-b"]``, ``{"zone":"eu-1a"}``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = (
    "APPLICATIONS",
    "INPUT_TABLES",
    "MEMBERS",
    "MEMBER_TASKS",
    "OWNERSHIP_ACTIVE",
    "OWNERSHIP_STANDBY",
    "REPARTITION_TOPICS",
    "SUBTOPOLOGIES",
    "TOPIC_PARTITIONS",
    "Column",
    "TableSpec",
)

OWNERSHIP_ACTIVE = "active"
OWNERSHIP_STANDBY = "standby"


@dataclass(frozen=True, slots=True)
class Column:
    """One column: ``required`` columns must be present and non-null in a usable row."""

    name: str
    type: str
    required: bool
    doc: str

    @property
    def is_complex(self) -> bool:
        """Arrays and maps: JSON text in CSV cells."""
        return self.type.startswith(("array<", "map<"))


@dataclass(frozen=True, slots=True)
class TableSpec:
    """A snapshot table: its columns, the key that must be unique, and whether the file may be absent."""

    name: str
    doc: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    optional: bool = False

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(c.name for c in self.columns)

    def column(self, name: str) -> Column:
        for c in self.columns:
            if c.name == name:
                return c
        raise KeyError(f"table {self.name} has no column {name!r}")


APPLICATIONS = TableSpec(
    "applications",
    "One row per Kafka Streams application (consumer group): its assignor, configs and clock.",
    (
        Column("app_id", "string", True, "the application id (application.id); unique"),
        Column("assignor", "string", False,
               "assignor short name, module:Class or file.py:Class; null = the run's default"),
        Column("configs", "map<string,string>", False,
               "assignment configs by Kafka name (num.standby.replicas, ...), values as text; null = defaults"),
        Column("now_ms", "long", False, "the leader's clock in epoch ms (follow-up deadlines); null = 0"),
        Column("leader_process_id", "string", False,
               "process id of the group leader's client (gets the probing deadline); null = first client"),
    ),
    key=("app_id",),
)

SUBTOPOLOGIES = TableSpec(
    "subtopologies",
    "One row per subtopology of an application's topology.",
    (
        Column("app_id", "string", True, "the application"),
        Column("subtopology", "int", True, "the subtopology id (the first number of a task id); unique per app"),
        Column("source_topics", "array<string>", True,
               "topics it reads: external topics and the application's repartition topics"),
        Column("sink_topics", "array<string>", False,
               "topics it writes; only repartition topics matter (they size them)"),
        Column("stores", "array<string>", False, "its state store names (any store makes its tasks stateful)"),
        Column("changelog_topics", "array<string>", False,
               "changelog topics of its logged stores; a source topic listed here is a source-changelog topic"),
        Column("copartition_groups", "array<array<string>>", False,
               "groups of its source topics that must be co-partitioned (joins); merged across the app"),
    ),
    key=("app_id", "subtopology"),
)

REPARTITION_TOPICS = TableSpec(
    "repartition_topics",
    "The application's internal repartition topics (optional table).",
    (
        Column("app_id", "string", True, "the application"),
        Column("topic", "string", True, "the repartition topic, as named in source_topics/sink_topics"),
        Column("num_partitions", "int", False,
               "a partition count fixed by the topology (repartition(numberOfPartitions)); null = computed"),
    ),
    key=("app_id", "topic"),
    optional=True,
)

TOPIC_PARTITIONS = TableSpec(
    "topic_partitions",
    "One row per partition of every topic an application reads or restores from (cluster metadata).",
    (
        Column("app_id", "string", True, "the application whose cluster this partition was read from"),
        Column("topic", "string", True, "topic name"),
        Column("partition", "int", True, "partition number; a topic's partition count is its highest + 1"),
        Column("replica_racks", "array<string>", False,
               "racks of the partition's replicas; null = unknown, [] = known to have none"),
        Column("end_offset", "long", False,
               "log end offset; required for changelog partitions (not source-changelog ones)"),
        Column("committed_offset", "long", False,
               "the application's committed offset; the 'end' of a source-changelog partition (null = 0)"),
        Column("size_bytes", "long", False, "bytes on disk; a task's state_bytes is the sum over its changelogs"),
    ),
    key=("app_id", "topic", "partition"),
)

MEMBERS = TableSpec(
    "members",
    "One row per group member (consumer = StreamThread) of each application.",
    (
        Column("app_id", "string", True, "the application"),
        Column("consumer_id", "string", True, "the member id; unique per app"),
        Column("process_id", "string", False,
               "UUID of the member's KafkaStreams client; required unless subscription_info carries it"),
        Column("rack", "string", False, "client.rack; the client's rack is its first member's (by consumer_id)"),
        Column("client_tags", "map<string,string>", False, "client.tag.* (KIP-708), at most 5"),
        Column("host", "string", False, "application.server (host:port) for interactive queries"),
        Column("subscription_info", "binary", False,
               "the member's raw SubscriptionInfo (v1-11, base64 in CSV/JSON): process id, host, client tags "
               "and task offset sums are read from it"),
    ),
    key=("app_id", "consumer_id"),
)

MEMBER_TASKS = TableSpec(
    "member_tasks",
    "What each member owned and reported before the rebalance: one row per (member, task) (optional table).",
    (
        Column("app_id", "string", True, "the application"),
        Column("consumer_id", "string", True, "the member that reported it"),
        Column("task_id", "string", True, "task id '<subtopology>_<partition>'"),
        Column("ownership", "string", False, "'active', 'standby' or null: what the member owned"),
        Column("offset_sum", "long", False,
               "reported task offset sum (-2 running active, -3 unknown, else >= 0); tasks with changelogs only"),
    ),
    key=("app_id", "consumer_id", "task_id"),
    optional=True,
)

#: Every input table, in the order they are read and reported.
INPUT_TABLES: Mapping[str, TableSpec] = MappingProxyType({
    t.name: t for t in (APPLICATIONS, SUBTOPOLOGIES, REPARTITION_TOPICS, TOPIC_PARTITIONS, MEMBERS, MEMBER_TASKS)
})
