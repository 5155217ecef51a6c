"""Rows holding strings that are not valid UTF-8 are malformed, shown escaped; the rest of the bucket runs
(issue 18, point 3; the Python side, which Parquet tables reach with their bytes as they are)."""

from __future__ import annotations

import json

import pyarrow as pa

from taskassign.fleet import reasons as R
from taskassign.fleet.bucket import bucket_table, process_bucket
from taskassign.fleet.tables import INPUT_TABLES
from taskassign.fleet.text import quarantine_invalid_text
from tests.fleet.snapshots import APP, base_rows


def with_raw(table: pa.Table, name: str, index: int, raw: bytes) -> pa.Table:
    """``table`` with the string ``name`` of row ``index`` replaced by ``raw`` (not validated)."""
    values = [v.encode() if isinstance(v, str) else v for v in table.column(name).to_pylist()]
    values[index] = raw
    column = pa.array(values, pa.binary()).view(pa.string())
    return table.set_column(table.schema.get_field_index(name), name, column)


def test_invalid_utf8_in_a_value_makes_the_row_malformed_and_the_rest_runs() -> None:
    rows = base_rows()
    tables = {name: bucket_table(INPUT_TABLES[name], rows.get(name, [])) for name in INPUT_TABLES}
    rack = rows["members"][1]["rack"]
    tables["members"] = with_raw(tables["members"], "rack", 1, b"\xff\xfe-a")
    result = process_bucket(tables)
    assert [r["status"] for r in result.results] == [R.STATUS_ASSIGNED]
    (error,) = [e for e in result.errors if e["table"] == "members"]
    assert error["reason_code"] == R.MALFORMED_ROW and "column rack: not valid UTF-8" in error["reason"]
    shown = json.loads(error["source_row"] or "")
    assert shown["rack"] == "\\xff\\xfe-a" and shown["consumer_id"] == rows["members"][1]["consumer_id"]
    assert rack != shown["rack"] and "\ufffd" not in (error["source_row"] or "")
    assert result.results[0]["source_rows"]["members"] == len(rows["members"]) - 1  # type: ignore[index]


def test_nested_strings_and_valid_tables() -> None:
    spec = INPUT_TABLES["subtopologies"]
    rows = base_rows()["subtopologies"]
    table = bucket_table(spec, rows)
    assert quarantine_invalid_text(table, spec) is table
    values = [[t.encode() for t in r["source_topics"]] for r in rows]
    values[0][0] = b"in\xc3"
    column = pa.array(values, pa.list_(pa.binary())).cast(pa.list_(pa.binary())).view(pa.list_(pa.string()))
    bad = table.set_column(table.schema.get_field_index("source_topics"), "source_topics", column)
    checked = quarantine_invalid_text(bad, spec)
    assert checked.column("_malformed").to_pylist()[0].startswith("column source_topics: not valid UTF-8")
    assert checked.column("source_topics").to_pylist()[0] is None
    assert checked.column("_malformed").to_pylist()[1:] == [None] * (len(rows) - 1)
    assert json.loads(checked.column("_source_row")[0].as_py())["source_topics"][0] == "in\\xc3"
    assert APP in checked.column("_source_row")[0].as_py()
