"""The Python side of the pipeline: engine calls inside Spark's Arrow workers.

Three functions run in the workers, each over many applications per call (a Python call costs
1-3 ms, so one call per application would cost more than small applications' assignment):

* ``config_checker``: every applications row's configs and assignor (mapInArrow over the table);
* ``topology_resolver``: every application's topology into task counts (mapInArrow over one nested
  row per application);
* ``application_assigner``: every application through the engine (applyInArrow over buckets of
  applications, iterating record batches, so a bucket never sits in memory whole).

Each factory returns a plain function closed over the run's options; cloudpickle ships it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import StructType

from taskassign.errors import DecodeError
from taskassign.fleet.application import assign_application, check_application
from taskassign.fleet.topology import SubtopologySpec, TopologyError, resolve_topology
from taskassign.wire.subscription_info import SubscriptionInfo
from taskassign.wire.versions import LATEST_SUPPORTED_VERSION

__all__ = ("application_assigner", "config_checker", "subscription_decoder", "topology_resolver")

ArrowBatches = Iterator[pa.RecordBatch]


def config_checker(
    schema: StructType, assignor_override: str | None, kafka_compat: bool
) -> Callable[[ArrowBatches], ArrowBatches]:
    """Adds ``_config_code``, ``_config_reason``, ``_required_tags``, ``_kafka_compat`` to applications
    rows; ``schema`` is the output schema (the input's plus those four)."""
    arrow_schema = to_arrow_schema(schema)

    def check(batches: ArrowBatches) -> ArrowBatches:
        for batch in batches:
            configs = batch.column("configs").to_pylist()
            assignors = batch.column("assignor").to_pylist()
            codes, texts, tags, compat = [], [], [], []
            for props, assignor in zip(configs, assignors, strict=True):
                result = check_application(dict(props or ()), assignor, assignor_override=assignor_override,
                                           kafka_compat=kafka_compat)
                codes.append(result.code)
                texts.append(result.reason)
                tags.append(list(result.required_tags))
                compat.append(result.kafka_compat)
            extra = [pa.array(codes, pa.string()), pa.array(texts, pa.string()),
                     pa.array(tags, pa.list_(pa.string())), pa.array(compat, pa.bool_())]
            yield pa.RecordBatch.from_arrays([*batch.columns, *extra], schema=arrow_schema)

    return check


def decode_subscription(data: bytes | None) -> dict[str, Any]:
    """What a member's SubscriptionInfo says (process id, host, tags, offset sums), or why it cannot be used."""
    empty: dict[str, Any] = {"_sub_error": None, "_sub_process_id": None, "_sub_host": None, "_sub_tags": None,
                             "_sub_offsets": None}
    if data is None:
        return empty
    try:
        info = SubscriptionInfo.decode(data)
    except DecodeError as exc:
        return {**empty, "_sub_error": f"subscription_info: {exc}"}
    if info.is_future or info.process_id is None:
        return {**empty, "_sub_error": f"subscription_info: version {info.version} is newer than this leader "
                                       f"reads ({LATEST_SUPPORTED_VERSION}); Kafka would answer with version "
                                       "probing"}
    return {
        "_sub_error": None,
        "_sub_process_id": str(info.process_id),
        "_sub_host": info.user_endpoint,
        "_sub_tags": list(info.tags().items()) if info.version >= 11 else None,
        "_sub_offsets": [{"task_id": str(t), "offset_sum": o} for t, o in sorted(info.offset_sums().items())],
    }


def subscription_decoder(schema: StructType) -> Callable[[ArrowBatches], ArrowBatches]:
    """Members rows in, the same rows plus what their ``subscription_info`` bytes say out (``schema``: the
    input's columns plus ``_sub_error``, ``_sub_process_id``, ``_sub_host``, ``_sub_tags``, ``_sub_offsets``)."""
    arrow_schema = to_arrow_schema(schema)
    extra = [f for f in arrow_schema if f.name.startswith("_sub_")]

    def decode(batches: ArrowBatches) -> ArrowBatches:
        for batch in batches:
            decoded = [decode_subscription(data) for data in batch.column("subscription_info").to_pylist()]
            columns = [pa.array([d[f.name] for d in decoded], f.type) for f in extra]
            yield pa.RecordBatch.from_arrays([*batch.columns, *columns], schema=arrow_schema)

    return decode


def topology_resolver(schema: StructType) -> Callable[[ArrowBatches], ArrowBatches]:
    """One nested row per application (``app_id``, ``kafka_compat``, ``subtopologies``, ``topic_counts``,
    ``repartition``) in; one row per resolved subtopology, or one error row per application, out."""
    arrow_schema = to_arrow_schema(schema)

    def resolve(batches: ArrowBatches) -> ArrowBatches:
        for batch in batches:
            rows: list[dict[str, Any]] = []
            for app in batch.to_pylist():
                subs = [SubtopologySpec(s["subtopology"], tuple(s["source_topics"]), tuple(s["sink_topics"] or ()),
                                        tuple(tuple(g) for g in s["copartition_groups"] or ()))
                        for s in app["subtopologies"]]
                try:
                    resolved = resolve_topology(subs, dict(app["topic_counts"] or ()), dict(app["repartition"] or ()),
                                                kafka_compat=bool(app["kafka_compat"]))
                except TopologyError as exc:
                    rows.append({"app_id": app["app_id"], "subtopology": None, "num_tasks": None,
                                 "source_counts": None, "error_code": exc.code, "error_reason": str(exc)})
                    continue
                for sub in resolved.subtopologies:
                    rows.append({"app_id": app["app_id"], "subtopology": sub.id, "num_tasks": sub.num_tasks,
                                 "source_counts": list(sub.source_partition_counts.items()),
                                 "error_code": None, "error_reason": None})
            yield pa.RecordBatch.from_pylist(rows, schema=arrow_schema)

    return resolve


def application_assigner(
    schema: StructType, assignor_override: str | None, kafka_compat: bool
) -> Callable[[ArrowBatches], ArrowBatches]:
    """Nested application records (schemas.APP_INPUT) in, engine results (schemas.APP_RESULT) out."""
    arrow_schema = to_arrow_schema(schema)

    def assign(batches: ArrowBatches) -> ArrowBatches:
        # Assignors log Kafka's warnings (e.g. too few clients for the standbys); over a fleet they would
        # flood the driver's terminal. What matters per application is in the results.
        logging.getLogger("taskassign").setLevel(logging.ERROR)
        for batch in batches:
            results = [assign_application(app, assignor_override=assignor_override, kafka_compat=kafka_compat)
                       for app in batch.to_pylist()]
            yield pa.RecordBatch.from_pylist(results, schema=arrow_schema)

    return assign
