"""``taskassign capture`` on streams groups (KIP-1071), without a Kafka: real Kafka 4.2 brokers' frames
(tests/capture/data/recordings, two applications, seven target-assignment epochs) served by a loopback server.
The capture must send only requests the recording answers and write, member by member, exactly what the
broker reported (compared with each recording's decoded summary)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from taskassign.cli import app
from tests.capture.frames_server import FrameServer, load_frames, recording_dirs, serve_frames

RUNNER = CliRunner()
RECORDINGS = recording_dirs()


def run(*args: str) -> tuple[int, str]:
    result = RUNNER.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.output


def capture_recording(recording: Path, out: Path, *extra: str) -> tuple[int, str, FrameServer]:
    summary = json.loads((recording / "summary.json").read_text())
    with serve_frames(load_frames(recording / "frames.json")) as server:
        code, output = run("capture", "--bootstrap-server", f"127.0.0.1:{server.port}", "--group",
                           summary["application_id"], "-o", str(out), "--timeout", "10", *extra)
    return code, output, server


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
    code, output, server = capture_recording(recording, out, "--protocol", "auto")
    assert code == 0, output
    assert server.unanswered() == []
    # Every request is one the recorder sent, byte for byte, except ApiVersions (the client's own name) and
    # Metadata (the recorder asked for every topic of the topology, the capture for the input topics).
    assert set(server.inexact()) <= {(18, 3), (3, 12)}
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


def recorded_summary(run_name: str, epoch: int) -> dict[str, Any]:
    (path,) = [p for p in recording_dirs(run_name) if p.name.startswith(f"epoch-{epoch:03d}")]
    return dict(json.loads((path / "summary.json").read_text()))


# --- replay: the broker's assignor reproduces every recorded target assignment ------------------------------


@pytest.fixture(scope="module")
def histories(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each run's recordings captured into one history directory (one streams-group file per epoch)."""
    result = {}
    for run_dir in sorted({p.parent for p in RECORDINGS}):
        history = tmp_path_factory.mktemp(run_dir.name[:2])
        for recording in recording_dirs(run_dir.name):
            code, output, _ = capture_recording(recording, history / f"{recording.name}.json")
            assert code == 0, output
        result[run_dir.name[:2]] = history
    return result


def test_replay_reproduces_every_epoch_of_the_wordcount_run(histories: dict[str, Path]) -> None:
    code, output = run("rebalance", str(histories["03"]), "--json")
    assert code == 0, output
    doc = json.loads(output)
    assert [e["assignment_epoch"] for e in doc["epochs"]] == [7, 11, 13, 14]
    assert all(e["matches"] for e in doc["epochs"])
    # 7 -> 11: instances d and e joined one thread at a time, each join its own computation (epochs 8-10 unseen).
    assert len(doc["epochs"][1]["steps"]) == 4
    assert [len(e["steps"]) for e in doc["epochs"] if e["assignment_epoch"] != 11] == [1, 1, 1]


def test_replay_reproduces_every_epoch_after_the_first_of_the_shop_run(histories: dict[str, Path]) -> None:
    files = sorted(histories["04"].iterdir())
    code, output = run("rebalance", str(files[1]), "--previous", str(files[0]))
    assert code == 0, output
    assert "12 of 12 members match" in flat(output)
    code, output = run("rebalance", str(files[2]), "--previous", str(files[1]), "--json")
    assert code == 0, output
    (epoch,) = json.loads(output)["epochs"]
    assert (epoch["assignment_epoch"], epoch["previous_epoch"], len(epoch["steps"])) == (17, 14, 3)  # c's 3 threads


def test_a_first_capture_without_its_history_is_reported_not_guessed(histories: dict[str, Path]) -> None:
    # The shop group reached epoch 13 through 12 single-thread joins the capture did not see: replayed from
    # nothing the targets differ, and the replay says why and where (exit 1, members and tasks named).
    first = sorted(histories["04"].iterdir())[0]
    code, output = run("rebalance", str(first))
    output = flat(output)
    assert code == 1
    assert "members differ from the broker's target" in output
    assert "no previous capture" in output
    code, output = run("rebalance", str(histories["04"]))
    output = flat(output)
    assert code == 1
    assert "2 of 3 epoch(s) reproduced" in output


REPLAYS = Path(__file__).parent / "data" / "replays"


@pytest.mark.parametrize(("pair", "epochs", "offsets"), [
    # c (2 threads, a fresh process) joined a and b: c's members reported no offsets when they joined; the
    # captured ones name the state their assignment created afterwards.
    ("44-scale-out", (6, 8), "the previous capture's task offsets for the members it holds and no task offsets "
                             "for the members that joined since"),
    # c left: the members that took c's tasks reported new offsets after they reconciled.
    ("44-leave", (8, 10), "the previous capture's task offsets for the members it holds"),
])
def test_a_44_replay_uses_the_task_offsets_the_broker_held_when_it_computed(pair: str, epochs: tuple[int, int],
                                                                            offsets: str) -> None:
    # Captures from the live test on a Kafka 4.4 broker (tests/capture/test_live_streams_capture.py): 4.4's
    # sticky assignor ranks members by their reported task offsets, and the offsets captured after the
    # rebalance are not the ones the coordinator computed with: replayed with them, two members swap tasks.
    first, second = sorted((REPLAYS / pair).iterdir())
    code, output = run("rebalance", str(second), "--previous", str(first), "--json")
    assert code == 0, output
    (epoch,) = json.loads(output)["epochs"]
    assert (epoch["previous_epoch"], epoch["assignment_epoch"], epoch["matches"]) == (*epochs, True)
    assert f"replayed with {offsets}" in epoch["notes"], epoch["notes"]
    _, output = run("rebalance", str(REPLAYS / pair))  # a history: the same step, whatever the first does
    assert f"epoch {epochs[1]} from epoch {epochs[0]}: {epoch['members']} of {epoch['members']} members match" \
        in flat(output), output


@pytest.mark.parametrize(("pair", "epochs", "steps"), [
    ("44-join-threads-standby-1", (6, 8), ["joined OFRI8x5HQuip6eNMmHPioA", "joined opE0GF7HShKym5fJZecASw"]),
    ("44-join-threads-standby-2", (7, 9), ["joined t5Oe_zmIRM64UoxLUqim3w", "joined AxsF5exjTSK_5ZRchnpKOg"]),
    ("44-crash-threads-standby-1", (9, 11), ["left eTLZYud0TauBgfqObdgylA", "left dnc2v2lXRw25xKoZ9C99iQ"])])
def test_a_44_join_of_a_multi_threaded_instance_with_standbys(pair: str, epochs: tuple[int, int],
                                                              steps: list[str]) -> None:
    # Captures from the live test on a Kafka 4.4 broker (test_live_streams_capture.py): one standby from the
    # broker's default (multi-store, a 2-thread instance joins a 2- and a 3-thread one, or crashes), two from a group
    # override (a chain of five subtopologies, a 2-thread instance joins instances of 1, 2 and 3 threads). The
    # instance's threads joined (expired) one per computation, and the second computation started from the tasks
    # members held while reconciling the first: neither the unseen epochs from the previous targets nor one
    # computation from reconciling inputs reproduces the broker's target; both together do.
    first, second = sorted((REPLAYS / pair).iterdir())
    code, output = run("rebalance", str(second), "--previous", str(first), "--json")
    (epoch,) = json.loads(output)["epochs"]
    assert (epoch["previous_epoch"], epoch["assignment_epoch"]) == epochs
    assert code == 0 and epoch["matches"], epoch
    assert epoch["steps"] == steps, epoch
    note = " ".join(epoch["notes"])
    assert "mid-reconciliation through epochs the capture did not see" in note, note
    assert "the broker computed 2 times between the two captures, members reconciling in between" in note, note
    assert re.search(r"\d+ of \d+ candidate sequences reproduce the broker's target", note), note


def test_a_44_unseen_epochs_that_no_reconciling_sequence_reproduces_say_so(tmp_path: Path) -> None:
    # The 2-thread join with one standby, its recorded target altered (two members swap an active task): no
    # grouping of the two joins from any holding gives it, and the replay says what it tried.
    first, second = sorted((REPLAYS / "44-join-threads-standby-1").iterdir())
    doc = json.loads(second.read_text())
    one, two = doc["members"][1], doc["members"][2]
    one["activeTasks"]["0"], two["activeTasks"]["0"] = two["activeTasks"]["0"], one["activeTasks"]["0"]
    altered = tmp_path / second.name
    altered.write_text(json.dumps(doc))
    code, output = run("rebalance", str(altered), "--previous", str(first), "--json")
    (epoch,) = json.loads(output)["epochs"]
    assert code == 1 and not epoch["matches"] and epoch["differences"], epoch
    note = " ".join(epoch["notes"])
    assert "nor does any grouping of the 2 membership changes into computations the capture did not see" in note, note


def test_a_44_unseen_epochs_from_reconciling_inputs_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from taskassign.streams_protocol import replay

    monkeypatch.setattr(replay, "MAX_RECONCILING_INPUTS", 10)
    first, second = sorted((REPLAYS / "44-join-threads-standby-1").iterdir())
    code, output = run("rebalance", str(second), "--previous", str(first), "--json")
    (epoch,) = json.loads(output)["epochs"]
    assert code == 1 and not epoch["matches"], epoch
    assert "too many to try (more than 10 computations)" in " ".join(epoch["notes"]), epoch["notes"]


def _replayed(directory: Path) -> tuple[int, list[dict[str, Any]]]:
    code, output = run("rebalance", str(directory), "--json")
    return code, json.loads(output)["epochs"]


def test_a_44_replay_starts_from_the_tasks_members_held_while_still_reconciling() -> None:
    # A live Kafka 4.4 history (tests/capture/test_live_capture_groups.py: 2 instances x 2 threads, c joins, c is
    # SIGKILLed), watched while members still reconciled. 4.4's coordinator hands the assignor each member's
    # reconciled tasks (TargetAssignmentBuilder#createMemberMetadataAndState), not its previous target:
    # epoch 7 was computed when only one of c's threads had joined (the capture, group epoch 8, already holds the
    # other); epoch 8 from tasks c's first thread had taken and others not yet released; epoch 9 when one of c's
    # threads had expired and the other not yet (the capture no longer holds it). Replayed from the previous
    # targets, 3 of the 4 epochs differed by 3 or 4 tasks.
    code, epochs = _replayed(REPLAYS / "44-reconciling")
    assert code == 0, epochs
    assert [(e["previous_epoch"], e["assignment_epoch"], e["matches"]) for e in epochs] == [
        (None, 6, True), (6, 7, True), (7, 8, True), (8, 9, True)]
    notes = [" ".join(e["notes"]) for e in epochs]
    assert "not yet in the group at the computation (joined after it): 3dy9XWVlS2KHZJ912VOIZg" in notes[1], notes
    assert "the tasks members held mid-reconciliation" in notes[2], notes
    assert "still in the group at the computation (left after it): Pf9MXxN3RpuBpYerY2sLtA" in notes[3], notes
    assert "Pf9MXxN3RpuBpYerY2sLtA held 0_5, 1_5, 2_5" in notes[3], notes


def test_a_44_replay_that_no_reconciling_input_reproduces_names_what_it_could_not_see(tmp_path: Path) -> None:
    # The same history with epoch 9's recorded target altered (two members swap a task): no input between the
    # previous capture's current assignments and its targets gives it, and the replay says which input it lacked.
    history = tmp_path / "history"
    shutil.copytree(REPLAYS / "44-reconciling", history)
    path = history / "live-predict-epoch-0000000009.json"
    doc = json.loads(path.read_text())
    one, two = doc["members"][0], doc["members"][1]
    one["activeTasks"]["0"], two["activeTasks"]["0"] = two["activeTasks"]["0"], one["activeTasks"]["0"]
    path.write_text(json.dumps(doc))
    code, epochs = _replayed(history)
    assert code == 1
    last = epochs[-1]
    assert not last["matches"] and last["differences"], last
    note = " ".join(last["notes"])
    assert "the tasks members held when the broker computed were not seen" in note, note
    assert re.search(r"none of \d+ candidate inputs", note), note


def test_a_44_replay_with_too_many_reconciling_inputs_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from taskassign.streams_protocol import replay

    monkeypatch.setattr(replay, "MAX_RECONCILING_INPUTS", 2)
    code, epochs = _replayed(REPLAYS / "44-reconciling")
    assert code == 1
    note = " ".join(epochs[3]["notes"])
    assert not epochs[3]["matches"] and "too many to try (more than 2)" in note, note


def test_a_43_line_replays_from_the_previous_targets_only(tmp_path: Path) -> None:
    # Up to 4.3 the assignor reads the previous targets: the same captures said to come from a 4.3 broker are not
    # searched for reconciling inputs.
    history = tmp_path / "history"
    shutil.copytree(REPLAYS / "44-reconciling", history)
    for path in history.iterdir():
        doc = json.loads(path.read_text())
        doc["capture"]["brokerReleaseLine"] = "4.3"
        path.write_text(json.dumps(doc))
    code, epochs = _replayed(history)
    assert code == 1
    assert not any("reconcil" in " ".join(e["notes"]) for e in epochs), epochs


# --- bad input: each a clear message and exit code 2 ---------------------------------------------------------

from taskassign.capture import kafka_codec as codec  # noqa: E402
from tests.capture.frames_server import Frame  # noqa: E402

WORDCOUNT_7 = recording_dirs("03-kafka42-streams-wordcount")[0]
GROUP = "wc42-streams"


def _frame(api_key: int, version: int, body: bytes, *, request: bytes = b"", header_tags: bool = True) -> Frame:
    return Frame(api_key, version, codec.request_header(api_key, version, 0, "test") + request,
                 b"\x00\x00\x00\x00" + (b"\x00" if header_tags else b"") + body)


def _api_versions(keys: dict[int, tuple[int, int]], error: int = 0) -> Frame:
    w = codec.Writer().int16(error)
    w.compact_array(sorted(keys.items()), lambda w, kv: w.int16(kv[0]).int16(kv[1][0]).int16(kv[1][1]).tagged_fields())
    return _frame(18, 3, w.int32(0).tagged_fields().bytes(), header_tags=False)


def _tasks_w(w: codec.Writer, tasks: list[tuple[str, list[int]]]) -> None:
    w.compact_array(tasks, lambda w, t: w.compact_string(t[0]).compact_array(t[1], codec.Writer.int32).tagged_fields())


def _member(w: codec.Writer, m: dict[str, Any]) -> None:
    w.compact_string(m["id"]).int32(m.get("epoch", 3)).compact_string(None).compact_string(None)
    w.compact_string("client").compact_string("/127.0.0.1").int32(0).compact_string(m["process"])
    w.int8(-1).compact_array([], _member).compact_array([], _member).compact_array([], _member)
    for _ in range(2):  # current and target assignment
        _tasks_w(w, m.get("active", [("0", [0])]))
        _tasks_w(w, [])
        _tasks_w(w, [])
        w.tagged_fields()
    w.bool(False).tagged_fields()


def _node(w: codec.Writer, node: tuple[str, int, list[str], str | None, list[str], list[str]]) -> None:
    name, kind, sources, sink, stores, successors = node
    w.compact_string(name).int8(kind).compact_array(sources, codec.Writer.compact_string).compact_string(sink)
    w.compact_array(stores, codec.Writer.compact_string).compact_array(successors, codec.Writer.compact_string)
    w.tagged_fields()


def _describe(*, error: int = 0, message: str | None = None, state: str = "Stable",
              members: list[dict[str, Any]] | None = None, version: int = 0) -> Frame:
    w = codec.Writer().int32(0)

    def group(w: codec.Writer, _: object) -> None:
        w.int16(error).compact_string(message).compact_string(GROUP).compact_string(state).int32(3).int32(3)
        w.int8(1).int32(0)
        w.compact_array([0], lambda w, _: w.compact_string("0").compact_array(["wc-input"], codec.Writer.compact_string)
                        .compact_array([], codec.Writer.compact_string).compact_array([], _member)
                        .compact_array([], _member).tagged_fields())
        w.tagged_fields()
        w.compact_array(members if members is not None else [{"id": "m1", "process": "p1"}], _member)
        w.int32(-2147483648)
        if version >= 1:  # KIP-1331's description (AVAILABLE), KIP-1357's assignor name
            w.int8(1)
            w.compact_array([0], lambda w, _: w.compact_string("0").compact_array(
                [("KSTREAM-SOURCE-0000000000", 1, ["wc-input"], None, [], ["KSTREAM-SINK-0000000001"]),
                 ("KSTREAM-SINK-0000000001", 3, [], "wc-output", [], [])], _node).tagged_fields())
            w.compact_array([], _node).tagged_fields()
            w.int8(3).compact_string("balanced")
        w.tagged_fields()

    return _frame(89, version, w.compact_array([0], group).tagged_fields().bytes(),
                  request=codec.encode_streams_group_describe(GROUP, version))


def _list_groups(groups: list[tuple[str, str]]) -> Frame:
    w = codec.Writer().int32(0).int16(0)
    w.compact_array(groups, lambda w, g: w.compact_string(g[0]).compact_string("consumer" if g[1] == "classic"
                                                                               else g[1])
                    .compact_string("Stable").compact_string(g[1]).tagged_fields())
    return _frame(16, 5, w.tagged_fields().bytes())


def _recorded(*names: str) -> list[Frame]:
    return [f for f in load_frames(WORDCOUNT_7 / "frames.json")
            if {18: "ApiVersions", 10: "FindCoordinator", 89: "StreamsGroupDescribe", 32: "DescribeConfigs",
                3: "Metadata", 16: "ListGroups"}.get(f.api_key) in names]


def _capture(frames: list[Frame], tmp_path: Path, *extra: str) -> tuple[int, str]:
    with serve_frames(frames) as server:
        code, output = run("capture", "--bootstrap-server", f"127.0.0.1:{server.port}", "--group", GROUP,
                           "-o", str(tmp_path / "out.json"), "--timeout", "5", "--protocol", "streams", *extra)
    return code, flat(output)


def flat(text: str) -> str:
    """The terminal's line wrapping undone."""
    return " ".join(text.split())


KAFKA_44_VERSIONS = {0: (0, 13), 1: (0, 18), 2: (1, 11), 3: (0, 13), 10: (0, 6), 16: (0, 5), 18: (0, 5),
                     27: (0, 2), 32: (1, 4), 35: (0, 5), 42: (0, 3), 88: (0, 1), 89: (0, 1)}


def test_a_44_broker_is_described_with_v1_topology_description_and_assignor(tmp_path: Path) -> None:
    frames = [_api_versions(KAFKA_44_VERSIONS), _describe(version=1),
              *_recorded("FindCoordinator", "DescribeConfigs", "Metadata")]
    with serve_frames(frames) as server:
        code, output = run("capture", "--bootstrap-server", f"127.0.0.1:{server.port}", "--group", GROUP,
                           "-o", str(tmp_path / "out.json"), "--timeout", "5", "--protocol", "streams")
        assert server.unanswered() == []
    assert code == 0, output
    doc = json.loads((tmp_path / "out.json").read_text())
    capture = doc["capture"]
    assert (capture["brokerReleaseLine"], capture["streamsGroupDescribeVersion"]) == ("4.4", 1)
    assert capture["topologyDescriptionStatus"] == "AVAILABLE"
    assert capture["topologyDescription"]["subtopologies"][0]["nodes"][1] == {
        "name": "KSTREAM-SINK-0000000001", "type": "sink", "source_topics": [], "sink_topic": "wc-output",
        "stores": [], "successors": []}
    assert (capture["assignorName"], doc["assignor"]) == ("balanced", "balanced")
    assert doc["subtopologies"] == [{"id": "0", "partitions": 12, "stateful": False}]
    assert doc["members"][0]["activeTasks"] == {"0": [0]}


def test_a_broker_without_the_streams_protocol(tmp_path: Path) -> None:
    code, output = _capture([_api_versions({3: (0, 12), 10: (0, 4), 16: (0, 4), 32: (0, 4)})], tmp_path)
    assert code == 2, output
    assert "does not speak the streams rebalance protocol" in output and "Traceback" not in output
    # An old broker answers ApiVersions v3 with UNSUPPORTED_VERSION in the v0 layout (int32-counted array).
    old = codec.Writer().int16(35).int32(1).int16(18).int16(0).int16(2).bytes()
    code, output = _capture([_frame(18, 3, old, header_tags=False)], tmp_path)
    assert code == 2 and "does not speak ApiVersions v3" in output, output
    # A broker that advertises the API but whose coordinator has the protocol off.
    frames = [*_recorded("ApiVersions", "FindCoordinator"), _describe(error=35, message="streams is disabled")]
    code, output = _capture(frames, tmp_path)
    assert code == 2 and "group.coordinator.rebalance.protocols must include streams" in output, output


def test_a_group_that_is_not_a_streams_group(tmp_path: Path) -> None:
    frames = [*_recorded("ApiVersions", "FindCoordinator"),
              _describe(error=69, message=f"Group {GROUP} is not a streams group."), _list_groups([(GROUP, "classic")])]
    code, output = _capture(frames, tmp_path)
    assert code == 2, output
    assert "is not a streams group: it is a classic group" in output


def test_a_group_that_does_not_exist_or_is_being_deleted(tmp_path: Path) -> None:
    frames = [*_recorded("ApiVersions", "FindCoordinator"), _describe(error=69), _list_groups([])]
    code, output = _capture(frames, tmp_path)
    assert code == 2 and "does not exist" in output, output
    frames = [*_recorded("ApiVersions", "FindCoordinator"), _describe(state="Dead", members=[])]
    code, output = _capture(frames, tmp_path)
    assert code == 2 and "is being deleted (state Dead)" in output, output


def test_a_member_without_a_process_id(tmp_path: Path) -> None:
    frames = [*_recorded("ApiVersions", "FindCoordinator"),
              _describe(members=[{"id": "m1", "process": "p1"}, {"id": "m2", "process": ""}])]
    code, output = _capture(frames, tmp_path)
    assert code == 2, output
    assert "member 'm2'" in output and "has no process id" in output


def test_unknown_fields_from_a_newer_broker_are_skipped_and_malformed_answers_named(tmp_path: Path) -> None:
    (describe,) = _recorded("StreamsGroupDescribe")
    assert describe.response.endswith(b"\x00")
    # A newer broker's top-level tagged field (tag 7, two bytes): skipped, named in the file's notes.
    newer = Frame(89, 0, describe.request, describe.response[:-1] + b"\x01\x07\x02\xab\xcd")
    frames = [newer, *_recorded("ApiVersions", "FindCoordinator", "DescribeConfigs", "Metadata")]
    code, output = _capture(frames, tmp_path)
    assert code == 0, output
    doc = json.loads((tmp_path / "out.json").read_text())
    assert any("tag 7" in n for n in doc["capture"]["notes"])
    assert len(doc["members"]) == 6
    truncated = Frame(89, 0, describe.request, describe.response[:200])
    code, output = _capture([truncated, *_recorded("ApiVersions", "FindCoordinator")], tmp_path)
    assert code == 2, output
    assert "cannot decode StreamsGroupDescribeResponse v0" in output and "Traceback" not in output


# --- watch: every new target-assignment epoch recorded ------------------------------------------------------


def test_watch_records_every_new_epoch_into_a_history_that_replays(tmp_path: Path) -> None:
    # The four recordings of the wordcount run served one after the other: each poll sees the next epoch.
    frames = [f for recording in recording_dirs("03-kafka42-streams-wordcount")
              for f in load_frames(recording / "frames.json")]
    history = tmp_path / "history"
    with serve_frames(frames) as server:
        code, output = run("capture", "--bootstrap-server", f"127.0.0.1:{server.port}", "--group", GROUP,
                           "--watch", "--until", "4", "--interval", "0.05", "-o", str(history), "--timeout", "10")
    assert code == 0, output
    assert sorted(p.name for p in history.iterdir()) == [f"{GROUP}-epoch-{e:010d}.json" for e in (7, 11, 13, 14)]
    code, output = run("rebalance", str(history))
    assert code == 0, output
    assert "4 of 4 epoch(s) reproduced" in flat(output)


def test_until_takes_a_count_or_a_duration() -> None:
    from taskassign.api.watch import WatchLimit, parse_until

    assert parse_until("3") == WatchLimit(count=3)
    assert parse_until("90s") == WatchLimit(seconds=90.0)
    assert parse_until("10m") == WatchLimit(seconds=600.0)
    code, output = run("capture", "--bootstrap-server", "127.0.0.1:1", "--group", GROUP, "--watch", "--until",
                       "soon", "-o", "x")
    assert code == 2 and "--until 'soon'" in flat(output)


def test_all_groups_takes_the_streams_groups(tmp_path: Path) -> None:
    frames = load_frames(WORDCOUNT_7 / "frames.json")
    with serve_frames(frames) as server:
        code, output = run("capture", "--bootstrap-server", f"127.0.0.1:{server.port}", "--all-groups",
                           "--protocol", "streams", "-o", str(tmp_path / "fleet"), "--timeout", "10")
    assert code == 0, output
    doc = json.loads((tmp_path / "fleet" / "streams-groups" / f"{GROUP}.streams-group.json").read_text())
    assert doc["capture"]["assignmentEpoch"] == 7 and len(doc["members"]) == 6


def test_watch_of_a_classic_group_records_each_new_stable_generation(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    # DescribeGroups has no generation id: a new generation is a Stable group whose assignment bytes changed.
    from taskassign.api import watch
    from taskassign.capture.cluster import DescribedGroup, DescribedMember
    from taskassign.capture.group_capture import CapturedGroup

    def group(state: str, *assignments: bytes) -> DescribedGroup:
        return DescribedGroup("app", state, "consumer", "stream", tuple(
            DescribedMember(f"m{i}", None, "c", "/h", b"s", a) for i, a in enumerate(assignments)))

    answers = iter([group("PreparingRebalance"), group("Stable", b"a1"), group("PreparingRebalance"),
                    group("Stable", b"a2", b"b2"), group("Stable", b"a2", b"b2"), group("Stable", b"a3", b"b3")])

    class Reader:
        def __init__(self, *args: object, **kwargs: object) -> None: ...
        def __enter__(self) -> Reader:
            return self
        def __exit__(self, *args: object) -> None: ...
        def describe_group(self, group_id: str) -> DescribedGroup:
            return next(answers)

    captured = iter(range(1, 10))
    monkeypatch.setattr(watch, "capture_streams_application", lambda *a, **k: None)
    monkeypatch.setattr(watch, "ClusterReader", Reader)
    monkeypatch.setattr(watch, "capture_application",
                        lambda *a, **k: CapturedGroup({"format": "taskassign/group/v1", "n": next(captured)}, ()))
    result = watch.watch_group("b:9092", "app", tmp_path / "h", limit=watch.WatchLimit(count=3), interval=0,
                               now_ms=lambda: 0, sleep=lambda _: None)
    assert result.protocol == "classic" and result.polls == 5  # after a first look that the group exists
    assert [p.name for p in result.written] == ["app-gen-0001.json", "app-gen-0002.json", "app-gen-0003.json"]
    assert [json.loads(p.read_text())["n"] for p in result.written] == [1, 2, 3]


def test_ctrl_c_keeps_what_the_watch_recorded(tmp_path: Path) -> None:
    from taskassign.api import watch

    frames = load_frames(WORDCOUNT_7 / "frames.json")

    def interrupt(_: float) -> None:
        raise KeyboardInterrupt

    with serve_frames(frames) as server:
        result = watch.watch_group(f"127.0.0.1:{server.port}", GROUP, tmp_path / "h", limit=watch.WatchLimit(),
                                   timeout=5, now_ms=lambda: 0, sleep=interrupt)
    assert result.interrupted and [p.name for p in result.written] == [f"{GROUP}-epoch-0000000007.json"]
    assert json.loads(result.written[0].read_text())["capture"]["assignmentEpoch"] == 7


def test_rebalance_on_a_classic_watch_history_checks_each_generation(tmp_path: Path) -> None:
    example = Path(__file__).parents[2] / "examples" / "groups" / "orders-app.group.json"
    history = tmp_path / "history"
    history.mkdir()
    (history / "app-gen-0001.json").write_text(example.read_text())
    code, output = run("rebalance", str(history))
    assert code == 1 and "no recorded outcome" in flat(output) and "0 of 1 generation(s)" in flat(output)


def test_a_principal_without_describe_configs_on_the_group_is_told(tmp_path: Path) -> None:
    w = codec.Writer().int32(0)
    w.compact_array([0], lambda w, _: w.int16(30).compact_string("denied").int8(32).compact_string(GROUP)
                    .compact_array([], codec.Writer.int32).tagged_fields())
    configs = _frame(32, 4, w.tagged_fields().bytes())
    code, output = _capture([*_recorded("ApiVersions", "FindCoordinator", "StreamsGroupDescribe"), configs], tmp_path)
    assert code == 2, output
    assert "not authorised (GROUP_AUTHORIZATION_FAILED" in output and "DESCRIBE_CONFIGS on the group" in output


def test_a_first_capture_of_members_that_joined_one_by_one_in_start_order_replays(
        histories: dict[str, Path]) -> None:
    import dataclasses

    from taskassign.streams_protocol.format import parse_streams_group
    from taskassign.streams_protocol.replay import _compute, replay_step

    doc = json.loads(sorted(histories["03"].iterdir())[1].read_text())  # epoch 11: 10 members in 5 processes
    group = parse_streams_group(doc)
    clients = {mid: m["clientId"] for mid, m in doc["capture"]["members"].items()}
    joined, targets = [], {}
    for member in sorted(group.members, key=lambda m: clients[m.member_id]):  # a broker computing per join
        joined.append(member)
        targets = _compute(group, joined, targets, "4.2")
    made = dataclasses.replace(group, members=tuple(
        dataclasses.replace(m, active_tasks=targets[m.member_id][0], standby_tasks=targets[m.member_id][1])
        for m in group.members))
    replay = replay_step(None, made)
    assert replay.matches and len(replay.steps) == 10
    assert replay.steps[0] == "joined wc42-streams-a-StreamThread-1-consumer"
