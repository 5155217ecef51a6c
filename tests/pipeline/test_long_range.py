"""The pipeline's Python side with values at the edge of Kafka's range (issue 18, point 8): every output row
fits the output tables' Arrow types (int64 columns), or the input row is rejected with its valid range;
one application's extreme values never fail a bucket. No Spark session: the bucket and the Arrow schemas."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pyspark.sql.pandas.types import to_arrow_schema

from taskassign.fleet import reasons as R
from taskassign.fleet.bucket import bucket_table, process_bucket
from taskassign.fleet.outputs import app_row, client_rows, consumer_rows
from taskassign.fleet.tables import INPUT_TABLES
from taskassign.ids import LONG_MAX
from taskassign.pipeline.schemas import KIND_APP, KIND_CLIENT, KIND_CONSUMER, KIND_SCHEMAS
from tests.fleet.snapshots import APP, base_rows

longs = st.one_of(st.sampled_from([0, 1, LONG_MAX, LONG_MAX - 1, LONG_MAX - 600_000, 2**62]),
                  st.integers(0, LONG_MAX))


@st.composite
def snapshots(draw: st.DrawFn) -> dict[str, list[dict[str, Any]]]:
    rows = base_rows()
    rows["applications"][0]["now_ms"] = draw(longs)
    rows["applications"][0]["configs"]["probing.rebalance.interval.ms"] = str(
        draw(st.sampled_from([60_000, 600_000, LONG_MAX])))
    for partition in rows["topic_partitions"]:
        partition["end_offset"] = draw(longs)
        partition["size_bytes"] = draw(st.one_of(st.none(), longs))
    for report in rows["member_tasks"]:
        if report["offset_sum"] is not None and report["offset_sum"] >= 0:
            report["offset_sum"] = draw(longs)
    return rows


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(snapshots())
def test_output_rows_fit_their_int64_columns(rows: dict[str, list[dict[str, Any]]]) -> None:
    result = process_bucket({n: bucket_table(spec, rows.get(n, [])) for n, spec in INPUT_TABLES.items()})
    (app,) = result.results
    if app["status"] == R.STATUS_REJECTED:
        assert app["reason_code"] == R.BAD_VALUE and "must be between 0 and" in (app["reason"] or "")
        return
    schemas = {kind: to_arrow_schema(KIND_SCHEMAS[kind]) for kind in (KIND_APP, KIND_CLIENT, KIND_CONSUMER)}
    pa.Table.from_pylist([app_row(app)], schema=schemas[KIND_APP])
    pa.Table.from_pylist(client_rows(app), schema=schemas[KIND_CLIENT])
    pa.Table.from_pylist(consumer_rows(app), schema=schemas[KIND_CONSUMER])
    assert app["app_id"] == APP
