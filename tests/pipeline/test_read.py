from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from taskassign.errors import UserInputError
from taskassign.fleet.tables import APPLICATIONS, INPUT_TABLES
from taskassign.pipeline.read import MALFORMED, SOURCE_ROW, read_snapshot, source_row
from tests.pipeline.conftest import base_rows, write_snapshot

pytestmark = pytest.mark.spark


def typed_rows(spark: Any, directory: Path, table: str) -> list[dict[str, Any]]:
    df = read_snapshot(spark, directory)[table].df
    rows = [r.asDict(recursive=True) for r in df.collect()]
    return sorted(rows, key=lambda r: json.dumps({k: v for k, v in r.items() if k != SOURCE_ROW}, default=str))


@pytest.mark.slow  # 18 Spark reads (6 tables x 3 formats); the malformed-input tests below cover each format quickly
def test_every_format_reads_the_same_typed_rows(spark: Any, tmp_path: Path) -> None:
    rows = base_rows()
    rows["members"][2]["subscription_info"] = b"\x00\x00\x00\x0b binary \xff"  # base64 in CSV and JSON
    dirs = {fmt: write_snapshot(tmp_path / fmt, rows, fmt) for fmt in ("parquet", "csv", "json")}
    for table in INPUT_TABLES:
        parquet = [{k: v for k, v in r.items() if k != SOURCE_ROW} for r in typed_rows(spark, dirs["parquet"], table)]
        for fmt in ("csv", "json"):
            other = [{k: v for k, v in r.items() if k != SOURCE_ROW} for r in typed_rows(spark, dirs[fmt], table)]
            assert other == parquet, (fmt, table)
        assert all(r[MALFORMED] is None for r in parquet)


def test_source_row_is_the_raw_row_when_unreadable_else_the_typed_row(spark: Any, tmp_path: Path) -> None:
    directory = write_snapshot(tmp_path, base_rows(), "csv")
    path = directory / "applications.csv"
    path.write_text(path.read_text() + '"broken-app",,,soon,\n')
    df = read_snapshot(spark, directory)["applications"].df
    shown = {r["app_id"]: json.loads(r["row"]) for r in df.select("app_id", source_row(APPLICATIONS).alias("row"))
             .collect()}
    assert shown["orders-app"] == {"app_id": "orders-app", "assignor": None, "configs": {"num.standby.replicas": "1"},
                                   "now_ms": 1000, "leader_process_id": None}
    assert shown["broken-app"] == {"app_id": "broken-app", "assignor": None, "configs": None, "now_ms": "soon",
                                   "leader_process_id": None}


def test_malformed_csv_lines_and_cells(spark: Any, tmp_path: Path) -> None:
    directory = write_snapshot(tmp_path, base_rows(), "csv")
    path = directory / "topic_partitions.csv"
    path.write_text(path.read_text() + '"orders-app","t",notanint,,,,\n"orders-app","t",3\n'
                    '"orders-app","t",4,"[broken",,,\n')
    malformed = sorted(r[MALFORMED] for r in typed_rows(spark, directory, "topic_partitions") if r[MALFORMED])
    assert malformed == [
        "column partition: notanint is not a int",
        "column replica_racks: [broken is not a array<string>",
        "the CSV line does not have the 7 fields of the header",
    ]


def test_malformed_json_lines_and_unknown_keys(spark: Any, tmp_path: Path) -> None:
    directory = write_snapshot(tmp_path, base_rows(), "json")
    path = directory / "members.jsonl"
    path.write_text(path.read_text() + '{"app_id": "x", "consumer_id": \n'
                    '{"app_id": "x", "consumer_id": "c", "process_id": "p", "colour": "red"}\n'
                    '{"app_id": "x", "consumer_id": "c", "process_id": "p", "client_tags": ["not", "a", "map"]}\n')
    malformed = sorted(r[MALFORMED] for r in typed_rows(spark, directory, "members") if r[MALFORMED])
    assert malformed[0].startswith("column client_tags:")
    assert malformed[1] == "the line is not a JSON object"
    assert malformed[2].startswith("unknown key(s) colour; table members has app_id, consumer_id")


def test_snapshot_level_mistakes_are_user_errors(spark: Any, tmp_path: Path) -> None:
    directory = write_snapshot(tmp_path / "a", base_rows())
    (directory / "members.parquet").unlink()
    with pytest.raises(UserInputError, match="table 'members' is missing"):
        read_snapshot(spark, directory)
    directory = write_snapshot(tmp_path / "b", base_rows(), "csv")
    (directory / "members.csv").write_text("app_id,process_id\n")
    with pytest.raises(UserInputError, match="lacks required column"):
        read_snapshot(spark, directory)
    (directory / "members.csv").write_text("app_id,consumer_id,process_id,colour\n")
    with pytest.raises(UserInputError, match="unknown column"):
        read_snapshot(spark, directory)
    write_snapshot(tmp_path / "b", base_rows(), "json")
    (directory / "subtopologies.csv").write_text("x\n")
    with pytest.raises(UserInputError, match="given more than once"):
        read_snapshot(spark, directory)
    with pytest.raises(UserInputError, match="not a directory"):
        read_snapshot(spark, tmp_path / "nowhere")


def test_optional_tables_may_be_absent_and_directories_of_parts_work(spark: Any, tmp_path: Path) -> None:
    directory = write_snapshot(tmp_path / "snap", base_rows())
    (directory / "member_tasks.parquet").unlink()
    (directory / "repartition_topics.parquet").unlink()
    members = directory / "members"
    members.mkdir()
    (directory / "members.parquet").rename(members / "part-0.parquet")
    tables = read_snapshot(spark, directory)
    assert tables["member_tasks"].path is None and tables["member_tasks"].df.count() == 0
    assert tables["members"].format == "parquet" and tables["members"].df.count() == 3
