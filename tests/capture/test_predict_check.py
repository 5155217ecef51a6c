"""``taskassign predict-check`` on watched histories of real Kafka groups: classic generations captured from the
frames Kafka 4.0 and 4.2 brokers answered (tests/capture/data/histories), and streams groups' epochs captured from
the recorded 4.2 frames (tests/capture/data/recordings). Each change is predicted from the capture before it;
the test holds the measured accuracy and every difference's cause."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from taskassign.api.predict_check import check_history
from taskassign.api.prediction import CAUSE_LAGS, CAUSE_NEW_IDS, CAUSE_REPLAY, CAUSE_UNSEEN
from taskassign.cli import app
from tests.capture.frames_server import load_frames, recording_dirs, serve_frames

HISTORIES = Path(__file__).parent / "data" / "histories"
CLASSIC_40 = HISTORIES / "01-kafka40-classic-wordcount"
CLASSIC_42 = HISTORIES / "02-kafka42-classic-wordcount"
RUNNER = CliRunner()


def run(*args: str) -> tuple[int, str]:
    result = RUNNER.invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, " ".join(result.output.split())


@pytest.fixture(scope="module")
def streams_histories(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each recorded streams run captured epoch by epoch into a watch-style history."""
    result = {}
    for run_name in ("03-kafka42-streams-wordcount", "04-kafka42-streams-shop"):
        history = tmp_path_factory.mktemp(run_name[:2])
        for recording in recording_dirs(run_name):
            summary = json.loads((recording / "summary.json").read_text())
            name = f"{summary['application_id']}-epoch-{summary['assignment_epoch']:010d}.json"
            with serve_frames(load_frames(recording / "frames.json")) as server:
                code, output = run("capture", "--bootstrap-server", f"127.0.0.1:{server.port}", "--group",
                                   summary["application_id"], "-o", str(history / name), "--timeout", "10")
            assert code == 0, output
        result[run_name[:2]] = history
    return result


def test_classic_history_every_change_predicted_and_every_difference_explained() -> None:
    result = check_history(CLASSIC_40)
    assert result.protocol == "classic" and len(result.checks) == 5
    by_pair = {(c.before[-9:-5], c.after[-9:-5]): c for c in result.checks}
    join, leave = by_pair[("0002", "0004")], by_pair[("0012", "0014")]
    assert join.what_if == ("--add-clients 1:threads=2,tag.zone=a",)
    assert leave.what_if == ("--remove-client 6c8501a1",)
    # A clean kill of one instance: the what-if predicted Kafka's assignment task for task.
    assert leave.exact and (leave.actives_right, leave.tasks) == (12, 12)
    assert by_pair[("0004", "0006")].exact
    # Where it differs, a cause is named for each task, and none is taskassign's own replay.
    assert all(m.cause != CAUSE_REPLAY for c in result.checks for m in c.misses)
    assert {cause for cause, _ in join.causes()} == {CAUSE_LAGS, CAUSE_NEW_IDS}
    assert sum(c.actives_right for c in result.checks) == 46 and sum(c.tasks for c in result.checks) == 60


def test_a_restarted_classic_instance_is_predicted_exactly() -> None:
    (change,) = check_history(CLASSIC_42).checks
    assert change.change.startswith("same clients") and change.exact
    assert (change.actives_right, change.tasks, change.standbys_right, change.standbys) == (16, 16, 16, 16)


def test_streams_history_a_leave_and_a_config_change_are_exact_from_unmoved_inputs(
        streams_histories: dict[str, Path]) -> None:
    checks = check_history(streams_histories["03"]).checks
    scale_out, leave, standbys = checks
    for change in (leave, standbys):
        assert change.exact_expected and change.exact, change
    assert standbys.what_if == ("--set num.standby.replicas=2",)
    assert leave.what_if == ("--remove-client 01881d69",)
    # The scale-out: two instances whose four threads joined one at a time (four computations the watch did not
    # see) and process ids a what-if cannot know: those are the causes, and nothing else.
    assert (scale_out.actives_right, scale_out.tasks) == (18, 24)
    assert {cause for cause, _ in scale_out.causes()} == {CAUSE_NEW_IDS, CAUSE_UNSEEN}


def test_streams_shop_crash_differences_come_from_unseen_computations(streams_histories: dict[str, Path]) -> None:
    override, crash = check_history(streams_histories["04"]).checks
    assert override.exact
    assert crash.what_if == ("--remove-client 424dcb5c",)
    assert crash.misses and {m.cause for m in crash.misses} == {CAUSE_UNSEEN}


def test_the_command_reports_the_accuracy_and_the_causes(tmp_path: Path) -> None:
    code, output = run("predict-check", str(CLASSIC_40))
    assert code == 0, output
    assert "actives where Kafka put them: 46 of 60 (77%)" in output
    assert "--remove-client 6c8501a1" in output and "lags moved on" in output
    code, output = run("predict-check", str(CLASSIC_40), "--json")
    doc = json.loads(output)
    assert doc["totals"]["changes"] == 5 and all(d["cause"] for c in doc["changes"] for d in c["differences"])


def _static_pair(tmp_path: Path) -> Path:
    """A capture, then the same generation after a static member came back within the session timeout: the
    coordinator handed it its old assignment under a new member id and kept its new subscription."""
    history = tmp_path / "history"
    history.mkdir()
    doc: dict[str, Any] = json.loads((CLASSIC_42 / "wc42-classic-gen-0006.json").read_text())
    for m in doc["members"]:
        m["group_instance_id"] = m["client_id"]
    (history / "app-gen-0001.json").write_text(json.dumps(doc))
    restarted = doc["members"][3]
    old_id = restarted["member_id"]
    restarted["member_id"] = old_id.rsplit("-", 1)[0] + "-restarted"
    if doc.get("leader") == old_id:
        doc["leader"] = restarted["member_id"]
    (history / "app-gen-0002.json").write_text(json.dumps(doc))
    return history


def test_a_static_restart_without_a_rebalance_is_recognised_not_predicted(tmp_path: Path) -> None:
    history = _static_pair(tmp_path)
    (change,) = check_history(history).checks
    assert change.skipped is not None and "static restart without a rebalance" in change.skipped
    code, output = run("predict-check", str(history))
    assert code == 0 and "not predicted" in output and "predicted 0 of 1 change(s)" in output


def test_a_difference_on_kafkas_own_inputs_fails_the_check(tmp_path: Path) -> None:
    history = tmp_path / "history"
    shutil.copytree(CLASSIC_40, history)
    path = history / "wc40-classic-gen-0014.json"
    doc = json.loads(path.read_text())
    a, b = doc["members"][0], doc["members"][2]  # Kafka's outcome tampered: two clients swap what they got
    a["assignment"], b["assignment"] = b["assignment"], a["assignment"]
    path.write_text(json.dumps(doc))
    code, output = run("predict-check", str(history))
    assert code == 1 and "taskassign's replay of Kafka's own inputs differs" in output


@pytest.mark.parametrize("files", [0, 1])
def test_a_history_needs_two_captures(tmp_path: Path, files: int) -> None:
    for i in range(files):
        shutil.copy(CLASSIC_42 / "wc42-classic-gen-0005.json", tmp_path / f"a-gen-{i:04d}.json")
    code, output = run("predict-check", str(tmp_path))
    assert code == 2 and f"{files} capture(s); a prediction needs two or more" in output
    code, output = run("predict-check", str(tmp_path / "missing"))
    assert code == 2 and "no such directory" in output
