"""``taskassign capture`` on streams groups (KIP-1071), without a Kafka: real Kafka 4.2 brokers' frames
(tests/capture/data/recordings, two applications, seven target-assignment epochs) served by a loopback server.
The capture must send only requests the recording answers and write, member by member, exactly what the
broker reported (compared with each recording's decoded summary)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from taskassign.capture.release_line import release_line
from taskassign.cli import app
from tests.capture.frames_server import load_frames, recording_dirs, serve_frames

RUNNER = CliRunner()
RECORDINGS = recording_dirs()


def run(*args: str) -> tuple[int, str]:
    result = RUNNER.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.output


def capture_recording(recording: Path, out: Path, *extra: str) -> tuple[int, str, list[tuple[int, int]]]:
    summary = json.loads((recording / "summary.json").read_text())
    with serve_frames(load_frames(recording / "frames.json")) as server:
        code, output = run("capture", "--bootstrap-server", f"127.0.0.1:{server.port}", "--group",
                           summary["application_id"], "-o", str(out), "--timeout", "10", *extra)
    return code, output, server.unanswered()


def _tasks(names: list[str]) -> dict[str, list[int]]:
    result: dict[str, list[int]] = {}
    for name in names:
        sid, partition = name.rsplit("_", 1)
        result.setdefault(sid, []).append(int(partition))
    return {sid: sorted(ps) for sid, ps in result.items()}


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda p: f"{p.parent.name[:2]}-{p.name}")
def test_capture_reproduces_every_members_recorded_data(recording: Path, tmp_path: Path) -> None:
    summary = json.loads((recording / "summary.json").read_text())
    out = tmp_path / "group.streams-group.json"
    code, output, unanswered = capture_recording(recording, out, "--protocol", "auto")
    assert code == 0, output
    assert unanswered == []
    doc = json.loads(out.read_text())
    capture = doc["capture"]
    assert doc["format"] == "taskassign/streams-group/v1"
    assert (capture["groupState"], capture["groupEpoch"], capture["assignmentEpoch"], capture["topologyEpoch"]) == (
        summary["group_state"], summary["group_epoch"], summary["assignment_epoch"], summary["topology_epoch"])
    assert capture["brokerReleaseLine"] == "4.2"
    assert capture["streamsGroupDescribeVersion"] == 0
    assert [m["memberId"] for m in doc["members"]] == [m["member_id"] for m in summary["members"]]
    for member, recorded in zip(doc["members"], summary["members"], strict=True):
        seen = capture["members"][member["memberId"]]
        assert member["processId"] == recorded["process_id"]
        assert member["rackId"] == recorded["rack_id"]
        assert member["instanceId"] == recorded["instance_id"]
        assert member["clientTags"] == recorded["client_tags"]
        assert seen["memberEpoch"] == recorded["member_epoch"]
        assert seen["clientId"] == recorded["client_id"]
        assert seen["clientHost"] == recorded["client_host"]
        assert seen["topologyEpoch"] == recorded["topology_epoch"]
        assert seen["isClassic"] == recorded["is_classic"]
        endpoint = recorded["user_endpoint"]
        expected = None if endpoint is None else {"host": endpoint["Host"], "port": endpoint["Port"]}
        assert seen["userEndpoint"] == expected
        assert member["taskOffsets"] == {} and recorded["task_offsets"] == []
        assert member["taskEndOffsets"] == {} and recorded["task_end_offsets"] == []
        for key, name in (("activeTasks", "target_active"), ("standbyTasks", "target_standby"),
                          ("warmupTasks", "target_warmup")):
            assert member[key] == _tasks(recorded[name]), (member["memberId"], key)
        current = seen["currentAssignment"]
        for key, name in (("activeTasks", "active"), ("standbyTasks", "standby"), ("warmupTasks", "warmup")):
            assert current[key] == _tasks(recorded[name]), (member["memberId"], key)
    # The topology as the broker holds it.
    broker_view = [{"subtopology": s["id"], "source_topics": s["sourceTopics"],
                    "repartition_sink_topics": s["repartitionSinkTopics"],
                    "changelogs": {i["name"]: i["partitions"] for i in s["stateChangelogTopics"]},
                    "repartition_sources": {i["name"]: i["partitions"] for i in s["repartitionSourceTopics"]}}
                   for s in capture["topology"]["subtopologies"]]
    assert broker_view == summary["topology"]
    assert {k: (v["value"], v["readOnly"]) for k, v in capture["groupConfigs"].items()} == {
        k: (v["value"], v["read_only"]) for k, v in summary["group_configs"].items()}
    # The assignor's input: every subtopology's tasks, standbys as the broker ran them.
    subs = {s["id"]: (s["partitions"], s["stateful"]) for s in doc["subtopologies"]}
    for s in summary["topology"]:
        stateful = bool(s["changelogs"])
        assert subs[s["subtopology"]][1] == stateful
    standbys = max((sum(_tasks(m["target_standby"]).get(sid, []).count(p) for m in summary["members"])
                    for sid, (n, _) in subs.items() for p in range(n)), default=0)
    assert doc["configs"] == {"num.standby.replicas": str(standbys)}


def test_the_release_line_is_read_off_the_api_versions_ranges() -> None:
    base = {0: (0, 13), 1: (0, 18), 2: (1, 11), 3: (0, 13), 27: (0, 2), 35: (0, 4), 18: (0, 4), 42: (0, 2),
            88: (0, 0), 89: (0, 0)}
    assert release_line(base) == "4.2"
    assert release_line({**base, 35: (0, 5)}) == "4.3"
    assert release_line({**base, 35: (0, 5), 18: (0, 5), 42: (0, 3), 89: (0, 1)}) == "4.4"
    assert release_line({**base, 2: (1, 10), 27: (0, 1)}) == "4.1"
    assert release_line({**base, 1: (0, 17), 0: (0, 12), 2: (1, 10)}) == "4.0"
    assert release_line({0: (0, 11), 1: (0, 17), 3: (0, 12)}) == "3.9"
    assert release_line({0: (0, 9)}) is None


def recorded_summary(run_name: str, epoch: int) -> dict[str, Any]:
    (path,) = [p for p in recording_dirs(run_name) if p.name.startswith(f"epoch-{epoch:03d}")]
    return dict(json.loads((path / "summary.json").read_text()))
