"""``taskassign bridge build|properties|replay``, ``serve``, ``plan`` and ``approve`` from the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

from typer.testing import CliRunner

from taskassign.bridge.plans import load_approved
from taskassign.bridge.request import request_from_scenario
from taskassign.cli import app
from taskassign.formats.scenario import read_scenario
from tests.helpers import EXAMPLES_DIR, start_service, stop_service

runner = CliRunner()
EXAMPLE = EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json"
GROUP = EXAMPLES_DIR / "groups" / "orders-app.group.json"


def test_properties_name_the_assignor_and_the_taskassign_keys() -> None:
    result = runner.invoke(app, ["bridge", "properties", "--url", "http://127.0.0.1:8787/", "--timeout-ms", "300",
                                 "--token-file", "/etc/taskassign/token"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if not line.startswith("#")]
    assert lines == ["task.assignor.class=dev.taskassign.bridge.TaskassignTaskAssignor",
                     "taskassign.url=http://127.0.0.1:8787", "taskassign.timeout.ms=300",
                     "taskassign.token.file=/etc/taskassign/token"]
    streams = runner.invoke(app, ["bridge", "properties", "--url", "http://h:1", "--protocol", "streams"])
    assert "group.streams.assignors=sticky,dev.taskassign.bridge.TaskassignStreamsAssignor" in streams.stdout
    assert "taskassign.timeout.ms=200" in streams.stdout and "streams.assignor.name=taskassign" in streams.stdout


def test_properties_refuse_a_url_that_is_not_http() -> None:
    result = runner.invoke(app, ["bridge", "properties", "--url", "ftp://x"])
    assert result.exit_code == 2 and "--url" in result.stderr


def test_build_without_a_kafka_streams_jar_is_exit_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["bridge", "build", "--kafka-libs", str(tmp_path), "-o", str(tmp_path / "b.jar")])
    assert result.exit_code == 2 and "kafka-streams" in result.stderr


def test_build_without_javac_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "kafka-streams-3.9.0.jar").write_bytes(b"")
    env = {**os.environ, "PATH": str(tmp_path), "JAVA_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-m", "taskassign", "bridge", "build", "--kafka-libs", str(tmp_path),
                           "-o", str(tmp_path / "b.jar")], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 2 and "javac" in done.stderr


def test_serve_refuses_a_non_loopback_address_without_allow_remote() -> None:
    result = runner.invoke(app, ["serve", "--listen", "0.0.0.0:0"])
    assert result.exit_code == 2 and "--allow-remote" in result.stderr


def test_plan_shows_the_moves_and_approve_stores_it(tmp_path: Path) -> None:
    plan_file = tmp_path / "orders.plan.json"
    result = runner.invoke(app, ["plan", str(GROUP), "-a", "state_aware", "-o", str(plan_file)])
    assert result.exit_code == 0, result.output
    assert "actives moved" in result.stdout and "wrote plan" in result.stdout
    plan = json.loads(plan_file.read_text())
    assert plan["assignor"] == "state_aware" and plan["diff"]["format"] == "taskassign/assignment-diff/v1"
    result = runner.invoke(app, ["approve", str(plan_file), "--state-dir", str(tmp_path / "state")])
    assert result.exit_code == 0, result.output
    assert load_approved(tmp_path / "state", plan["application_id"]) == plan


def test_approve_refuses_an_edited_plan(tmp_path: Path) -> None:
    plan_file = tmp_path / "p.plan.json"
    assert runner.invoke(app, ["plan", str(EXAMPLE), "-a", "sticky", "-o", str(plan_file)]).exit_code == 0
    plan = json.loads(plan_file.read_text())
    first = sorted(plan["clients"])[0]
    plan["clients"][first]["standby"] = []
    plan_file.write_text(json.dumps(plan))
    result = runner.invoke(app, ["approve", str(plan_file), "--state-dir", str(tmp_path)])
    assert result.exit_code == 2 and "plan_id" in result.stderr


def _post(url: str, doc: object) -> dict:
    request = urllib.request.Request(url, data=json.dumps(doc).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_serve_answers_approve_hands_it_a_plan_and_replay_reproduces_a_decision(tmp_path: Path) -> None:
    state = tmp_path / "state"
    process, url = start_service("-a", "state_aware", "--state-dir", str(state))
    try:
        scenario = read_scenario(EXAMPLE)
        answer = _post(url + "/v1/assign", request_from_scenario(scenario, "orders"))
        assert answer["source"] == "computed"
        # the decision replayed: `assign` on its scenario writes the recorded assignment file byte for byte
        result = runner.invoke(app, ["bridge", "replay", str(state / "audit.jsonl"), "--out-dir", str(tmp_path)])
        assert result.exit_code == 0, result.output
        decision = answer["decision_id"]
        replayed = tmp_path / "replayed.assignment.json"
        result = runner.invoke(app, ["assign", str(tmp_path / f"{decision}.scenario.json"), "-a", "state_aware",
                                     "-o", str(replayed)])
        assert result.exit_code == 0, result.output
        assert replayed.read_bytes() == (tmp_path / f"{decision}.assignment.json").read_bytes()
        # a plan made on the replayed scenario, approved over HTTP, is what the service answers next
        plan_file = tmp_path / "orders.plan.json"
        result = runner.invoke(app, ["plan", str(tmp_path / f"{decision}.scenario.json"), "-a", "sticky", "-o",
                                     str(plan_file), "--application-id", "orders"])
        assert result.exit_code == 0, result.output
        result = runner.invoke(app, ["approve", str(plan_file), "--service", url])
        assert result.exit_code == 0, result.output
        answer = _post(url + "/v1/assign", request_from_scenario(scenario, "orders"))
        assert answer["source"] == "plan" and answer["plan_id"] == json.loads(plan_file.read_text())["plan_id"]
        with urllib.request.urlopen(url + "/healthz", timeout=10) as response:
            assert json.loads(response.read())["status"] == "ok"
    finally:
        stop_service(process)


def test_plan_for_a_streams_group_and_approve(tmp_path: Path) -> None:
    group = EXAMPLES_DIR / "streams-groups" / "two-racks-one-standby.streams-group.json"
    plan_file = tmp_path / "g.plan.json"
    result = runner.invoke(app, ["plan", str(group), "-a", "streams_balanced", "-o", str(plan_file)])
    assert result.exit_code == 0, result.output
    plan = json.loads(plan_file.read_text())
    assert plan["protocol"] == "streams" and "active after" in result.stdout
    assert runner.invoke(app, ["approve", str(plan_file), "--state-dir", str(tmp_path)]).exit_code == 0
    bad = runner.invoke(app, ["plan", str(group), "-a", "state_aware", "-o", str(plan_file)])
    assert bad.exit_code == 2 and "streams-protocol" in bad.stderr and "state_aware" in bad.stderr
