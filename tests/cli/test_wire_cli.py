from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from taskassign.cli import app
from taskassign.ids import ProcessId, TaskId
from taskassign.wire import Subscription, SubscriptionInfo

runner = CliRunner()
INFO = SubscriptionInfo.of(11, ProcessId.of_ints(0, 1), {TaskId(0, 0): -2}, user_endpoint="h:1")
SUB = Subscription.of(["topic1"], INFO.encode(), [("topic1", 0)], rack_id="r1").encode()


def test_decode_then_encode_gives_the_bytes_back(tmp_path: Path) -> None:
    decoded = runner.invoke(app, ["decode", "subscription", SUB.hex()])
    assert decoded.exit_code == 0, decoded.output
    doc = json.loads(decoded.stdout)
    assert doc["format"] == "taskassign/wire/v1" and doc["user_data"]["task_offset_sums"][0]["task"] == "0_0"
    (tmp_path / "s.json").write_text(decoded.stdout)
    encoded = runner.invoke(app, ["encode", str(tmp_path / "s.json")])
    assert encoded.exit_code == 0 and encoded.stdout.strip() == SUB.hex()
    b64 = runner.invoke(app, ["encode", str(tmp_path / "s.json"), "--as", "base64"])
    assert b64.stdout.strip() == __import__("base64").b64encode(SUB).decode()
    out = tmp_path / "s.bin"
    assert runner.invoke(app, ["encode", str(tmp_path / "s.json"), "--as", "binary", "-o", str(out)]).exit_code == 0
    assert out.read_bytes() == SUB


def test_decode_reads_files_and_stdin(tmp_path: Path) -> None:
    (tmp_path / "raw.bin").write_bytes(INFO.encode())
    (tmp_path / "text.txt").write_text(INFO.encode().hex() + "\n")
    for arg in (f"@{tmp_path / 'raw.bin'}", f"@{tmp_path / 'text.txt'}"):
        result = runner.invoke(app, ["decode", "subscription-info", arg])
        assert result.exit_code == 0 and json.loads(result.stdout)["user_endpoint"] == "h:1"
    piped = runner.invoke(app, ["decode", "subscription-info", "-"], input=INFO.encode().hex())
    assert piped.exit_code == 0


def test_bad_bytes_exit_2_with_field_and_offset() -> None:
    result = runner.invoke(app, ["decode", "subscription", SUB[:30].hex()])
    assert result.exit_code == 2
    text = " ".join(result.output.split())
    assert "field 'user_data' at byte 18" in text and "Traceback" not in text
    assert runner.invoke(app, ["decode", "assignment-info", "zz"]).exit_code == 2
    assert runner.invoke(app, ["encode", "/no/such.json"]).exit_code == 2


def test_trailing_bytes_are_noted() -> None:
    result = runner.invoke(app, ["decode", "subscription-info", INFO.encode().hex() + "beef"])
    assert result.exit_code == 0 and "2 bytes after it were not read" in result.output


def test_encode_of_a_lone_surrogate_topic_exits_2_naming_the_path(tmp_path: Path) -> None:
    doc = tmp_path / "m.json"
    doc.write_text('{"format": "taskassign/wire/v1", "message": "assignment_info", "version": 5, '
                   '"commonly_supported_version": 5, "active_tasks": ["0_0"], "standby_tasks": [], '
                   '"partitions_by_host": [{"host": "h", "port": 1, "partitions": [["\\ud800", 0]]}], '
                   '"error_code": 0}')
    result = runner.invoke(app, ["encode", str(doc)])
    assert result.exit_code == 2, result.output
    assert "$.partitions_by_host[0].partitions[0][0]" in " ".join(result.output.split()).replace(" ", "")
