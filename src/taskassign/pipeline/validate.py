"""Row checks: each input row is marked with the first reason it cannot be used, or none.

Every function here is DataFrame -> DataFrame: it adds (or keeps) ``_reject_code`` and ``_reject_reason``
and never drops a row, so rows in = rows used + rows rejected holds by construction at every step; the
stages then use the unmarked rows and the errors table collects the marked ones. Checks run in a fixed
order and the first failing check wins: how the row reads (malformed, missing values), its key
(duplicates), its values, then what it refers to (application, member, task).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from taskassign.fleet import reasons
from taskassign.fleet.tables import (
    APPLICATIONS,
    MEMBER_TASKS,
    MEMBERS,
    OWNERSHIP_ACTIVE,
    OWNERSHIP_STANDBY,
    REPARTITION_TOPICS,
    SUBTOPOLOGIES,
    TOPIC_PARTITIONS,
    TableSpec,
)
from taskassign.pipeline.read import MALFORMED

__all__ = (
    "CODE",
    "REASON",
    "app_status",
    "check_applications",
    "check_member_references",
    "check_member_tasks",
    "check_members",
    "check_partition_references",
    "check_repartition_topics",
    "check_subtopologies",
    "check_topic_partitions",
    "mark_rejected_applications",
    "rejected",
    "usable",
    "with_rules",
)

CODE = "_reject_code"
REASON = "_reject_reason"
APP_OK = "_app_ok"
REQUIRED_TAGS = "_required_tags"
UUID_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$"
TASK_ID_PATTERN = "^([0-9]+)_([0-9]+)$"
HOST_PATTERN = "^(.+):([0-9]+)$"
MAX_CLIENT_TAGS, MAX_TAG_KEY, MAX_TAG_VALUE = 5, 20, 30

Rule = tuple[Column, str | Column, Column]


def with_rules(df: DataFrame, rules: Sequence[Rule]) -> DataFrame:
    """Mark each row with the first rule it fails; rows already marked keep their mark."""
    if not rules:
        return df
    code_chain = F.when(rules[0][0], _literal(rules[0][1]))
    reason_chain = F.when(rules[0][0], rules[0][2])
    for condition, code, reason in rules[1:]:
        code_chain = code_chain.when(condition, _literal(code))
        reason_chain = reason_chain.when(condition, reason)
    if CODE not in df.columns:
        return df.withColumn(CODE, code_chain).withColumn(REASON, reason_chain)
    return (df.withColumn(REASON, F.when(F.col(CODE).isNull(), reason_chain).otherwise(F.col(REASON)))
              .withColumn(CODE, F.coalesce(F.col(CODE), code_chain)))


def _literal(code: str | Column) -> Column:
    return code if isinstance(code, Column) else F.lit(code)


def usable(df: DataFrame) -> DataFrame:
    """The rows no check rejected."""
    return df.where(F.col(CODE).isNull())


def rejected(df: DataFrame) -> DataFrame:
    return df.where(F.col(CODE).isNotNull())


def _text(*parts: str | Column) -> Column:
    return F.concat(*[F.lit(p) if isinstance(p, str) else p.cast("string") for p in parts])


def _basic_rules(spec: TableSpec) -> list[Rule]:
    rules: list[Rule] = [(F.col(MALFORMED).isNotNull(), reasons.MALFORMED_ROW, F.col(MALFORMED))]
    for column in spec.columns:
        if not column.required:
            continue
        value = F.col(column.name)
        missing = value.isNull()
        if column.type == "string":
            missing = missing | (F.trim(value) == "")
        elif column.is_complex:
            missing = missing | (F.size(value) == 0)
        rules.append((missing, reasons.MISSING_VALUE, F.lit(f"column {column.name} is missing")))
    return rules


_KEY_ROWS = "_key_rows"


def _count_duplicates(df: DataFrame, key: Sequence[str]) -> DataFrame:
    """Adds ``_key_rows``: how many rows share the row's key, where more than one does (else null).

    A hash aggregation and a hash join on the (usually empty) duplicates: no sort of the table, and
    keyed by app_id first, so it stays inside the table's partitions."""
    shared = df.groupBy(*key).agg(F.count(F.lit(1)).alias(_KEY_ROWS)).where(F.col(_KEY_ROWS) > 1)
    return df.join(shared.hint("shuffle_hash"), list(key), "left")


def _duplicate_rule(what: str) -> Rule:
    count = F.col(_KEY_ROWS)
    return (count.isNotNull(), reasons.DUPLICATE_KEY, _text(count, f" rows share this {what}; all are rejected"))


def _app_rules() -> list[Rule]:
    return [
        (F.col(APP_OK).isNull(), reasons.UNKNOWN_APPLICATION,
         _text("application ", F.col("app_id"), " is not in the applications table")),
        (~F.col(APP_OK), reasons.APPLICATION_REJECTED,
         _text("application ", F.col("app_id"), " was rejected (see its applications row)")),
    ]


def _has_blank(array: Column) -> Column:
    return F.exists(array, lambda x: x.isNull() | (F.trim(x) == ""))


def _negative(*names: str) -> list[Rule]:
    return [(F.col(n) < 0, reasons.BAD_VALUE, _text(f"{n} is negative: ", F.col(n))) for n in names]


def check_applications(apps: DataFrame) -> DataFrame:
    """Applications with ``_config_code``/``_config_reason`` (from the config check) already added."""
    leader = F.col("leader_process_id")
    return with_rules(_count_duplicates(apps, ["app_id"]), [
        *_basic_rules(APPLICATIONS),
        _duplicate_rule("app_id"),
        *_negative("now_ms"),
        (leader.isNotNull() & ~leader.rlike(UUID_PATTERN), reasons.BAD_PROCESS_ID,
         _text("leader_process_id is not a UUID: ", leader)),
        (F.col("_config_code").isNotNull(), F.col("_config_code"), F.col("_config_reason")),
    ]).drop(_KEY_ROWS)


def app_status(checked_apps: DataFrame) -> DataFrame:
    """One row per distinct application id: ``_app_ok`` (its only row is usable) and its required tags."""
    return (checked_apps.where(F.col("app_id").isNotNull())
            .groupBy("app_id")
            .agg((F.count(F.lit(1)) == 1).alias("_single"), F.max(F.col(CODE).isNull()).alias("_valid"),
                 F.first(REQUIRED_TAGS).alias(REQUIRED_TAGS))
            .select("app_id", (F.col("_single") & F.col("_valid")).alias(APP_OK), REQUIRED_TAGS))


def _join_apps(df: DataFrame, status: DataFrame) -> DataFrame:
    return df.join(F.broadcast(status.select("app_id", APP_OK)), "app_id", "left")


def check_subtopologies(subs: DataFrame, status: DataFrame) -> DataFrame:
    sources, changelogs, groups = F.col("source_topics"), F.col("changelog_topics"), F.col("copartition_groups")
    arrays = ("source_topics", "sink_topics", "stores", "changelog_topics")
    keyed = _count_duplicates(_join_apps(subs, status), ["app_id", "subtopology"])
    return with_rules(keyed, [
        *_basic_rules(SUBTOPOLOGIES),
        *_app_rules(),
        *_negative("subtopology"),
        *[(_has_blank(F.col(a)), reasons.BAD_VALUE, F.lit(f"{a} has a null or empty topic/store name"))
          for a in arrays],
        (F.exists(groups, lambda g: g.isNull() | _has_blank(g) | F.exists(g, lambda t: ~F.array_contains(sources, t))),
         reasons.BAD_VALUE, F.lit("copartition_groups must list this subtopology's own source topics")),
        ((F.size(F.coalesce(changelogs, F.array())) > 0) & (F.size(F.coalesce(F.col("stores"), F.array())) == 0),
         reasons.BAD_VALUE, F.lit("changelog_topics without stores: changelogs back state stores")),
        _duplicate_rule("(app_id, subtopology)"),
    ]).drop(_KEY_ROWS)


def check_repartition_topics(topics: DataFrame, status: DataFrame, usable_subs: DataFrame) -> DataFrame:
    read = (usable_subs.select("app_id", F.explode("source_topics").alias("topic")).distinct()
            .withColumn("_read", F.lit(True)))
    keyed = _count_duplicates(_join_apps(topics, status), ["app_id", "topic"])
    return with_rules(keyed.join(read, ["app_id", "topic"], "left"), [
        *_basic_rules(REPARTITION_TOPICS),
        *_app_rules(),
        (F.col("num_partitions") <= 0, reasons.BAD_VALUE, _text("num_partitions must be positive: ",
                                                                 F.col("num_partitions"))),
        _duplicate_rule("(app_id, topic)"),
        (F.col("_read").isNull(), reasons.UNREFERENCED_TOPIC,
         _text("no subtopology of application ", F.col("app_id"), " reads repartition topic ", F.col("topic"))),
    ]).drop("_read", _KEY_ROWS)


def check_topic_partitions(partitions: DataFrame, status: DataFrame) -> DataFrame:
    """The checks that need nothing but the row and its application (references to tasks come later)."""
    keyed = _count_duplicates(_join_apps(partitions, status), ["app_id", "topic", "partition"])
    return with_rules(keyed, [
        *_basic_rules(TOPIC_PARTITIONS),
        *_app_rules(),
        *_negative("partition", "end_offset", "committed_offset", "size_bytes"),
        (_has_blank(F.col("replica_racks")), reasons.BAD_VALUE, F.lit("replica_racks has a null or empty rack")),
        _duplicate_rule("(app_id, topic, partition)"),
    ]).drop(_KEY_ROWS)


def _entries(tags: Column) -> Column:
    return F.array_sort(F.map_entries(tags))


def check_members(members: DataFrame, status: DataFrame) -> DataFrame:
    """Members as ``stages.decode_subscriptions`` leaves them (process id, host and tags possibly from
    the member's subscription_info, which must then agree with the row's own)."""
    pid, host, tags = F.col("process_id"), F.col("host"), F.col("client_tags")
    keys, values = F.map_keys(tags), F.map_values(tags)
    required = F.coalesce(F.col(REQUIRED_TAGS), F.array().cast("array<string>"))
    missing_tags = F.array_except(required, F.coalesce(keys, F.array().cast("array<string>")))
    port = F.regexp_extract(host, HOST_PATTERN, 2).try_cast("int")
    row_pid, sub_pid = F.col("_row_process_id"), F.col("_sub_process_id")
    row_tags, sub_tags = F.col("_row_tags"), F.col("_sub_tags")
    joined = members.join(F.broadcast(status.select("app_id", APP_OK, REQUIRED_TAGS)), "app_id", "left")
    return with_rules(_count_duplicates(joined, ["app_id", "consumer_id"]), [
        *_basic_rules(MEMBERS),
        (F.col("_sub_error").isNotNull(), reasons.MALFORMED_ROW, F.col("_sub_error")),
        (pid.isNull() | (F.trim(pid) == ""), reasons.MISSING_VALUE,
         F.lit("column process_id is missing (give it, or subscription_info)")),
        *_app_rules(),
        (row_pid.isNotNull() & sub_pid.isNotNull() & (F.lower(row_pid) != sub_pid), reasons.BAD_VALUE,
         _text("process_id ", row_pid, " differs from its subscription_info's ", sub_pid)),
        (F.col("_row_host").isNotNull() & F.col("_sub_host").isNotNull() & (F.col("_row_host") != F.col("_sub_host")),
         reasons.BAD_VALUE, _text("host ", F.col("_row_host"), " differs from its subscription_info's ",
                                  F.col("_sub_host"))),
        (row_tags.isNotNull() & sub_tags.isNotNull() & (_entries(row_tags) != _entries(sub_tags)), reasons.BAD_VALUE,
         F.lit("client_tags differ from its subscription_info's")),
        (~pid.rlike(UUID_PATTERN), reasons.BAD_PROCESS_ID, _text("process_id is not a UUID: ", pid)),
        (host.isNotNull() & (~host.rlike(HOST_PATTERN) | port.isNull() | (port > 65535)), reasons.BAD_VALUE,
         _text("host must be host:port (application.server), got ", host)),
        (F.size(F.coalesce(keys, F.array())) > MAX_CLIENT_TAGS, reasons.BAD_VALUE,
         F.lit(f"at most {MAX_CLIENT_TAGS} client tags are allowed")),
        (F.exists(keys, lambda k: (F.length(k) == 0) | (F.length(k) > MAX_TAG_KEY)), reasons.BAD_VALUE,
         F.lit(f"client tag keys must have 1 to {MAX_TAG_KEY} characters")),
        (F.exists(values, lambda v: v.isNull() | (F.length(v) > MAX_TAG_VALUE)), reasons.BAD_VALUE,
         F.lit(f"client tag values must be non-null with at most {MAX_TAG_VALUE} characters")),
        (F.size(missing_tags) > 0, reasons.MISSING_CLIENT_TAG,
         _text("rack.aware.assignment.tags needs tag(s) ", F.array_join(missing_tags, ", "), " on every member")),
        _duplicate_rule("(app_id, consumer_id)"),
    ]).drop(REQUIRED_TAGS, _KEY_ROWS, "_sub_error", "_sub_process_id", "_sub_host", "_sub_tags",
            "_row_process_id", "_row_host", "_row_tags")


def check_member_tasks(member_tasks: DataFrame, status: DataFrame) -> DataFrame:
    """The row's own checks; adds the parsed ``subtopology`` and ``partition`` of ``task_id``."""
    text = F.col("task_id")
    well_formed = text.rlike(TASK_ID_PATTERN)
    parts = F.split(text, "_", 2)
    parsed = (_join_apps(member_tasks, status)
              .withColumn("subtopology", F.when(well_formed, F.try_element_at(parts, F.lit(1)).try_cast("int")))
              .withColumn("partition", F.when(well_formed, F.try_element_at(parts, F.lit(2)).try_cast("int"))))
    ownership, offset = F.col("ownership"), F.col("offset_sum")
    keyed = _count_duplicates(parsed, ["app_id", "consumer_id", "subtopology", "partition"])
    return with_rules(keyed, [
        *_basic_rules(MEMBER_TASKS),
        *_app_rules(),
        (F.col("subtopology").isNull() | F.col("partition").isNull(),
         reasons.BAD_TASK_ID, _text("task id ", text, " does not parse: expected '<subtopology>_<partition>' "
                                                      "(non-negative 32-bit integers)")),
        (ownership.isNotNull() & ~ownership.isin(OWNERSHIP_ACTIVE, OWNERSHIP_STANDBY), reasons.BAD_VALUE,
         _text("ownership must be 'active', 'standby' or null, got ", ownership)),
        ((offset < -3) | (offset == -1), reasons.BAD_VALUE,
         _text("offset_sum must be -2 (running active), -3 (unknown) or >= 0, got ", offset)),
        (ownership.isNull() & offset.isNull(), reasons.MISSING_VALUE,
         F.lit("the row reports neither ownership nor an offset sum")),
        ((ownership == OWNERSHIP_STANDBY) & (offset == -2), reasons.INCONSISTENT_REPORT,
         F.lit("ownership 'standby' with offset_sum -2, which means a running active task")),
        _duplicate_rule("(app_id, consumer_id, task)"),
    ]).drop(_KEY_ROWS)


def check_partition_references(partitions: DataFrame, references: DataFrame) -> DataFrame:
    """Topic partitions no task reads or restores from are unused; a changelog partition without its end
    offset cannot be used (its application's lags become unknown, spec 2.4). ``references``: one row
    per (app_id, topic) with ``limit`` (tasks use partitions below it) and ``needs_end_offset``."""
    joined = partitions.join(F.broadcast(references), ["app_id", "topic"], "left")
    return with_rules(joined, [
        (F.col("limit").isNull() | (F.col("partition") >= F.col("limit")), reasons.UNREFERENCED_TOPIC,
         _text("no task of application ", F.col("app_id"), " reads or restores from ", F.col("topic"), "-",
               F.col("partition"))),
        (F.col("needs_end_offset") & F.col("end_offset").isNull(), reasons.MISSING_END_OFFSET,
         _text("changelog partition ", F.col("topic"), "-", F.col("partition"), " has no end_offset; every lag of "
               "application ", F.col("app_id"), " becomes unknown (-3)")),
    ]).drop("limit", "needs_end_offset")


def check_member_references(member_tasks: DataFrame, members: DataFrame, tasks: DataFrame) -> DataFrame:
    """Member tasks must name a usable member and a task of the application; offset sums only for tasks
    with a changelog. Adds the member's ``process_id``. ``tasks``: one row per subtopology with
    ``num_tasks`` and ``logged`` (stages.task_summaries)."""
    known_members = usable(members).select("app_id", "consumer_id", "process_id",
                                           F.col("subscription_info").isNotNull().alias("_has_subscription"))
    known_tasks = tasks.select("app_id", "subtopology", "num_tasks", "logged")
    joined = (member_tasks.join(F.broadcast(known_members), ["app_id", "consumer_id"], "left")
              .join(F.broadcast(known_tasks), ["app_id", "subtopology"], "left"))
    return with_rules(joined, [
        (F.col("process_id").isNull(), reasons.UNKNOWN_MEMBER,
         _text("consumer ", F.col("consumer_id"), " is not a usable member of application ", F.col("app_id"))),
        (F.col("num_tasks").isNull() | (F.col("partition") >= F.col("num_tasks")), reasons.UNKNOWN_TASK,
         _text("application ", F.col("app_id"), " has no task ", F.col("task_id"))),
        (F.col("offset_sum").isNotNull() & ~F.col("logged"), reasons.BAD_VALUE,
         _text("task ", F.col("task_id"), " has no changelog, so it has no offset sum")),
        (F.col("offset_sum").isNotNull() & F.col("_has_subscription") & ~F.col("_from_subscription"),
         reasons.BAD_VALUE, _text("consumer ", F.col("consumer_id"), " reports its offset sums in subscription_info; "
                                  "its member_tasks rows may only give ownership")),
    ]).drop("num_tasks", "logged", "_has_subscription")


def mark_rejected_applications(rejected_apps: DataFrame) -> Callable[[DataFrame], DataFrame]:
    """Rows of applications rejected as a whole later on (topology, engine) become APPLICATION_REJECTED."""

    def mark(df: DataFrame) -> DataFrame:
        flagged = rejected_apps.select("app_id").distinct().withColumn("_app_rejected", F.lit(True))
        return with_rules(df.join(F.broadcast(flagged), "app_id", "left"), [
            (F.col("_app_rejected").isNotNull(), reasons.APPLICATION_REJECTED,
             _text("application ", F.col("app_id"), " was rejected (see its applications row)")),
        ]).drop("_app_rejected")

    return mark
