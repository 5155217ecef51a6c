"""``taskassign serve`` over HTTP: answers the assignment `assign` computes, keeps every decision in the audit
log (replayable byte for byte), answers approved plans while they fit, and stays up and bounded on bad input."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from taskassign.bridge.audit import read_audit, record_files
from taskassign.bridge.plans import make_plan
from taskassign.bridge.request import answer_clients, request_from_scenario
from taskassign.bridge.service import check_listen
from taskassign.errors import UserInputError
from taskassign.formats.json_io import to_json_text
from taskassign.formats.scenario import read_scenario, with_config_overrides
from taskassign.leader.assign import assign_scenario, result_to_document
from tests.bridge.conftest import EXAMPLES, kip924_view

SCENARIO = EXAMPLES / "scenarios" / "two-racks-one-standby.scenario.json"


def test_the_answer_is_the_assignment_assign_computes(start_service, tmp_path: Path) -> None:
    service = start_service(assignor="state_aware")
    scenario = kip924_view(SCENARIO)
    status, answer = service.post("/v1/assign", request_from_scenario(scenario, "orders"))
    assert status == 200, answer
    assert answer["source"] == "computed" and answer["assignor"] == "state_aware"
    expected = assign_scenario(scenario, "state_aware")
    assert answer["clients"] == answer_clients(expected.group.clients)
    record = list(read_audit(tmp_path / "state" / "audit.jsonl"))[-1]
    assert record["decision_id"] == answer["decision_id"] and record["application_id"] == "orders"
    assert record["took_ms"] >= 0 and record["source"] == "computed"
    # replay: the record's scenario through `assign` gives the recorded assignment file, byte for byte
    scenario_file, assignment_file = record_files(record, tmp_path / "replay")
    from taskassign.formats.client_names import names_for_states, with_client_names

    replay_scenario = read_scenario(scenario_file)
    replayed = with_client_names(result_to_document(assign_scenario(replay_scenario, record["assignor"])),
                                 names_for_states(replay_scenario.state))
    assert to_json_text(replayed) == assignment_file.read_text()


def test_each_application_gets_its_configured_assignor_and_settings(start_service) -> None:
    service = start_service({"assignor": "sticky", "applications": {
        "payments": {"assignor": "high_availability", "configs": {"num.standby.replicas": 0}}}})
    scenario = kip924_view(SCENARIO)
    _, answer = service.post("/v1/assign", request_from_scenario(scenario, "payments"))
    assert answer["assignor"] == "high_availability"
    expected = assign_scenario(with_config_overrides(scenario, {"num.standby.replicas": 0}), "high_availability")
    assert answer["clients"] == answer_clients(expected.group.clients)
    _, other = service.post("/v1/assign", request_from_scenario(scenario, "orders"))
    assert other["assignor"] == "sticky"


def test_bad_requests_get_400_with_a_message_and_the_service_stays_up(start_service) -> None:
    service = start_service()
    status, body = service.post("/v1/assign", None, raw=b"{not json")
    assert status == 400 and "not JSON" in body["error"]
    status, body = service.post("/v1/assign", {"format": "taskassign/bridge-request/v1", "tasks": "x"})
    assert status == 400 and "$.tasks" in body["error"]
    status, body = service.post("/v1/assign", [1, 2])
    assert status == 400
    status, _ = service.get("/healthz")
    assert status == 200


def test_requests_larger_than_the_limit_get_413(start_service, tmp_path: Path) -> None:
    service = start_service({"max_request_bytes": 2048})
    status, body = service.post("/v1/assign", request_from_scenario(kip924_view(SCENARIO)) | {"pad": "x" * 4096})
    assert status == 413 and "limit" in body["error"]


def test_a_decision_past_the_deadline_is_an_error_not_a_late_answer(start_service, tmp_path: Path) -> None:
    plugin = tmp_path / "slow.py"
    plugin.write_text("import time\nfrom taskassign.assignors.sticky import StickyTaskAssignor\n"
                      "class Slow(StickyTaskAssignor):\n"
                      "    def assign(self, state):\n        time.sleep(1.0)\n        return super().assign(state)\n")
    service = start_service(assignor=f"{plugin}:Slow", deadline_ms=200)
    started = time.monotonic()
    status, body = service.post("/v1/assign", request_from_scenario(kip924_view(SCENARIO)))
    assert status == 503 and "deadline" in body["error"]
    assert time.monotonic() - started < 0.9
    _, metrics = service.get("/metrics")
    assert 'taskassign_bridge_fallbacks_total{reason="deadline"} 1' in metrics


def test_a_token_is_required_when_configured_and_never_echoed(start_service, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    service = start_service(token_file=token_file)
    request = request_from_scenario(kip924_view(SCENARIO))
    status, body = service.post("/v1/assign", request)
    assert status == 401 and "s3cret" not in json.dumps(body)
    status, _ = service.post("/v1/assign", request, token="wrong")
    assert status == 401
    status, _ = service.post("/v1/assign", request, token="s3cret-token")
    assert status == 200
    assert "s3cret" not in (tmp_path / "state" / "audit.jsonl").read_text()
    assert service.get("/healthz")[0] == 200  # health and metrics stay open to the monitoring system


def test_a_non_loopback_listen_needs_allow_remote() -> None:
    check_listen("127.0.0.1:8787", False)
    check_listen("[::1]:8787", False)
    check_listen("localhost:1", False)
    with pytest.raises(UserInputError, match="--allow-remote"):
        check_listen("0.0.0.0:8787", False)
    check_listen("0.0.0.0:8787", True)


def test_metrics_are_prometheus_text(start_service) -> None:
    service = start_service()
    service.post("/v1/assign", request_from_scenario(kip924_view(SCENARIO)))
    service.post("/v1/assign", None, raw=b"[]")
    status, text = service.get("/metrics")
    assert status == 200
    assert 'taskassign_bridge_decisions_total{protocol="classic",source="computed"} 1' in text
    assert 'taskassign_bridge_decisions_total{protocol="classic",source="error"} 1' in text
    assert 'taskassign_bridge_decision_seconds_bucket{le="+Inf"} 2' in text
    assert "taskassign_bridge_decision_seconds_count 2" in text


def test_an_approved_plan_is_answered_while_it_fits_and_not_after(start_service, tmp_path: Path) -> None:
    service = start_service(assignor="sticky")
    scenario = kip924_view(SCENARIO)
    planned = assign_scenario(scenario, "state_aware")
    plan = make_plan(scenario, "orders", "state_aware", answer_clients(planned.group.clients), None, 0)
    status, body = service.post("/v1/plans", plan)
    assert status == 200 and body["approved"] == plan["plan_id"]
    status, answer = service.post("/v1/assign", request_from_scenario(scenario, "orders"))
    assert answer["source"] == "plan" and answer["plan_id"] == plan["plan_id"]
    assert {p: (c["active"], c["standby"]) for p, c in answer["clients"].items()} == \
        {p: (c["active"], c["standby"]) for p, c in plan["clients"].items()}
    # a client leaves: the plan no longer fits, the service computes afresh and says why in the audit log
    request = request_from_scenario(scenario, "orders")
    request["clients"] = request["clients"][:-1]
    status, answer = service.post("/v1/assign", request)
    assert status == 200 and answer["source"] == "computed" and answer["assignor"] == "sticky"
    record = list(read_audit(tmp_path / "state" / "audit.jsonl"))[-1]
    assert "no longer fits" in record["plan_misfit"] and "processes differ" in record["plan_misfit"]


def test_a_tampered_plan_is_refused(start_service) -> None:
    service = start_service()
    scenario = kip924_view(SCENARIO)
    planned = assign_scenario(scenario, "sticky")
    plan = make_plan(scenario, "orders", "sticky", answer_clients(planned.group.clients), None, 0)
    first, second = sorted(plan["clients"])[:2]
    plan["clients"][second]["active"] += plan["clients"][first]["active"]
    status, body = service.post("/v1/plans", plan)
    assert status == 400 and "active on" in body["error"]


STREAMS_GROUPS = sorted((EXAMPLES / "streams-groups").glob("*.json"))


@pytest.mark.parametrize("path", STREAMS_GROUPS[:3], ids=lambda p: p.name)
def test_a_streams_group_gets_the_services_streams_assignor(start_service, tmp_path: Path, path: Path) -> None:
    from taskassign.formats.json_io import load_json_file
    from taskassign.streams_protocol.assignors import run_assignor
    from taskassign.streams_protocol.format import assignment_document, parse_streams_group

    service = start_service({"streams_assignor": "streams_balanced"})
    doc = load_json_file(path)
    status, answer = service.post("/v1/streams-assign", doc)
    group = parse_streams_group(doc)
    assert status == 200, answer
    expected = assignment_document("balanced", run_assignor(group, "balanced"))
    assert answer["members"] == expected["members"] and answer["assignor"] == "streams_balanced"
    record = list(read_audit(tmp_path / "state" / "audit.jsonl"))[-1]
    assert record["protocol"] == "streams" and record["assignment"]["members"] == expected["members"]


def test_a_malformed_streams_group_gets_400(start_service) -> None:
    service = start_service()
    status, body = service.post("/v1/streams-assign", {"subtopologies": [{"id": "0"}], "members": []})
    assert status == 400 and "$.subtopologies[0]" in body["error"]


def test_an_approved_streams_plan_is_answered_while_it_fits(start_service, tmp_path: Path) -> None:
    from taskassign.bridge.plans import make_streams_plan, streams_members_answer
    from taskassign.formats.json_io import load_json_file
    from taskassign.streams_protocol.assignors import run_assignor
    from taskassign.streams_protocol.format import parse_streams_group

    service = start_service({"streams_assignor": "streams_sticky"})
    doc = load_json_file(STREAMS_GROUPS[0])
    group = parse_streams_group(doc)
    plan = make_streams_plan(group, "orders", "streams_balanced", run_assignor(group, "balanced"), 1)
    assert service.post("/v1/plans", plan)[0] == 200
    status, answer = service.post("/v1/streams-assign", doc)
    assert status == 200 and answer["source"] == "plan" and answer["members"] == streams_members_answer(plan)
    doc["members"] = doc["members"][:-1]  # a member left: the plan no longer fits
    status, answer = service.post("/v1/streams-assign", doc)
    assert status == 200 and answer["source"] == "computed" and answer["assignor"] == "streams_sticky"
    assert "no" in list(read_audit(tmp_path / "state" / "audit.jsonl"))[-1]["plan_misfit"]
