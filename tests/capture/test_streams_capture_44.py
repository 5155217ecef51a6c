"""``taskassign capture`` and ``rebalance`` on a Kafka 4.4 streams group without a Kafka: the frames a capture
exchanged with a real 4.4 broker (tests/capture/data/recordings-4.4: StreamsGroupDescribe v1, task offsets) served
back by a loopback server. The capture must write, member by member, what Kafka's own Admin client decoded from the
same broker at the same epoch (``admin-summary.json``, Admin#describeStreamsGroups), and the replay must reproduce
the broker's targets from one capture to the next.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from tests.capture.frames_server import load_frames, serve_frames

RUNNER = CliRunner()
ROOT = Path(__file__).parent / "data" / "recordings-4.4"
RUNS = sorted(p for p in ROOT.iterdir() if p.is_dir()) if ROOT.is_dir() else []
RECORDINGS = [d for r in RUNS for d in sorted(r.iterdir()) if (d / "frames.json").exists()]


def run(*args: str) -> tuple[int, str]:
    result = RUNNER.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.output


def capture(recording: Path, out: Path) -> dict[str, Any]:
    summary = json.loads((recording / "admin-summary.json").read_text())
    with serve_frames(load_frames(recording / "frames.json")) as server:
        code, output = run("capture", "--bootstrap-server", f"127.0.0.1:{server.port}", "--group",
                           summary["group_id"], "-o", str(out), "--timeout", "10")
    assert code == 0, output
    assert server.unanswered() == []
    return dict(json.loads(out.read_text()))


def _tasks(names: list[str]) -> dict[str, list[int]]:
    result: dict[str, list[int]] = {}
    for name in names:
        sid, partition = name.rsplit("_", 1)
        result.setdefault(sid, []).append(int(partition))
    return {sid: sorted(ps) for sid, ps in result.items()}


def _offsets(rows: list[list[Any]]) -> dict[str, dict[str, int]]:
    result: dict[str, dict[str, int]] = {}
    for sid, partition, offset in rows:
        result.setdefault(sid, {})[str(partition)] = offset
    return result


def test_there_are_recordings() -> None:
    assert len(RECORDINGS) >= 3, RECORDINGS


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda p: p.name)
def test_capture_of_recorded_44_frames_equals_kafkas_admin_reading(recording: Path, tmp_path: Path) -> None:
    summary = json.loads((recording / "admin-summary.json").read_text())
    doc = capture(recording, tmp_path / "group.json")
    c = doc["capture"]
    assert (c["brokerReleaseLine"], c["brokerKafkaLine"]["line"], c["streamsGroupDescribeVersion"]) == ("4.4", "4.4", 1)
    assert (c["groupState"], c["groupEpoch"], c["assignmentEpoch"], c["topologyEpoch"], c["assignorName"]) == (
        summary["group_state"], summary["group_epoch"], summary["assignment_epoch"], summary["topology_epoch"],
        summary["assignor_name"])
    assert [(s["id"], sorted(s["source_topics"]), sorted(s["repartition_sink_topics"]))
            for s in sorted(summary["subtopologies"], key=lambda s: s["id"])] == [
        (s["id"], sorted(s["sourceTopics"]), sorted(s["repartitionSinkTopics"]))
        for s in sorted(c["topology"]["subtopologies"], key=lambda s: s["id"])]
    members = {m["memberId"]: m for m in doc["members"]}
    assert set(members) == {m["member_id"] for m in summary["members"]}
    reported = 0
    for recorded in summary["members"]:
        member, seen = members[recorded["member_id"]], c["members"][recorded["member_id"]]
        assert (member["processId"], member["rackId"], member["instanceId"], member["clientTags"]) == (
            recorded["process_id"], recorded["rack_id"], recorded["instance_id"], recorded["client_tags"])
        assert (seen["memberEpoch"], seen["clientId"], seen["clientHost"], seen["topologyEpoch"], seen["isClassic"],
                seen["userEndpoint"]) == (recorded["member_epoch"], recorded["client_id"], recorded["client_host"],
                                          recorded["topology_epoch"], recorded["is_classic"], recorded["user_endpoint"])
        for key, name in (("activeTasks", "target_active"), ("standbyTasks", "target_standby"),
                          ("warmupTasks", "target_warmup")):
            assert member[key] == _tasks(recorded[name]), (recorded["member_id"], key)
        for key, name in (("activeTasks", "active"), ("standbyTasks", "standby"), ("warmupTasks", "warmup")):
            assert seen["currentAssignment"][key] == _tasks(recorded[name]), (recorded["member_id"], key)
        assert member["taskOffsets"] == _offsets(recorded["task_offsets"])
        assert member["taskEndOffsets"] == _offsets(recorded["task_end_offsets"])
        reported += bool(recorded["task_offsets"])
    assert reported, "a 4.4 Streams client reports its task offsets"


def replay_history(run_dir: Path, tmp_path: Path) -> dict[int, dict[str, Any]]:
    """Every capture after the first replayed from the one before it; the epochs by assignment epoch."""
    history = tmp_path / "history"
    for recording in sorted(run_dir.iterdir()):
        if (recording / "frames.json").exists():
            capture(recording, history / f"{recording.name}.json")
    _, output = run("rebalance", str(history), "--json")  # the first capture follows epochs nobody saw
    doc = json.loads(output)
    assert doc["kafka_version"] == "4.4"
    assert all(e["kafka_version"] == "4.4" for e in doc["epochs"])
    return {e["assignment_epoch"]: e for e in doc["epochs"][1:]}


MULTI_STORE = ROOT / "05-kafka44-streams-multi-store"


def test_the_crash_and_the_group_override_replay_exactly(tmp_path: Path) -> None:
    """The broker's 4.4 sticky assignor gives the targets the broker recorded after the crash (12) and after the
    group override of the standbys (13), each from the capture before it."""
    epochs = replay_history(MULTI_STORE, tmp_path)
    assert sorted(epochs) == [10, 12, 13]
    assert [(n, epochs[n]["matches"], epochs[n]["differences"]) for n in (12, 13)] == [(12, True, []), (13, True, [])]


def test_the_scale_out_of_a_two_thread_instance_with_a_standby(tmp_path: Path) -> None:
    """The two threads joined one per computation (an epoch the capture did not see), the second computed from
    the tasks members held while reconciling the first (4.4's coordinator hands the assignor reconciled tasks)."""
    epoch = replay_history(MULTI_STORE, tmp_path)[10]
    assert epoch["matches"], epoch["differences"]
    assert len(epoch["steps"]) == 2 and all(s.startswith("joined ") for s in epoch["steps"]), epoch["steps"]
    assert any("mid-reconciliation through epochs the capture did not see" in n for n in epoch["notes"]), epoch


def test_rebalance_replays_the_line_it_is_told_and_names_it() -> None:
    """``--kafka-version`` replays another line than the captured broker's, and says so; a line without streams
    groups is an input error."""
    pair = Path(__file__).parent / "data" / "replays" / "44-leave"
    first, second = sorted(pair.iterdir())
    code, output = run("rebalance", str(second), "--previous", str(first), "--json")
    (epoch,) = json.loads(output)["epochs"]
    assert (code, epoch["kafka_version"]) == (0, "4.4") and not any("replayed as" in n for n in epoch["notes"])
    _, output = run("rebalance", str(second), "--previous", str(first), "--json", "--kafka-version", "4.2")
    doc = json.loads(output)
    assert doc["kafka_version"] == "4.2" and "replayed as Kafka 4.2: --kafka-version" in doc["epochs"][0]["notes"]
    _, text = run("rebalance", str(second), "--previous", str(first), "--kafka-version", "4.2")
    assert text.startswith("kafka 4.2 "), text[:80]
    code, output = run("rebalance", str(second), "--previous", str(first), "--kafka-version", "4.0")
    assert code == 2 and "no streams rebalance protocol" in output and "Traceback" not in output, output
