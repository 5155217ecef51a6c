from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from taskassign.fleet import application, reasons
from taskassign.fleet.application import assign_application, check_application, effective_assignor
from taskassign.fleet.build import build_scenario
from taskassign.ids import TaskId
from taskassign.leader.assign import assign_scenario, result_to_document
from tests.fleet.assignors import spec
from tests.fleet.inputs import PID_A, PID_B, app_input


def by_client(result: dict) -> dict[str, dict]:  # type: ignore[type-arg]
    return {c["process_id"]: c for c in result["clients"]}


def test_high_availability_moves_tasks_and_measures_the_restore() -> None:
    record = app_input(configs={"num.standby.replicas": "1"})
    result = assign_application(record)  # type: ignore[arg-type]  # the registry default: high_availability
    assert result["status"] == reasons.STATUS_ASSIGNED and result["assignor"] == "high_availability"
    metrics = result["metrics"]
    assert metrics is not None and metrics["unassigned_tasks"] == 0
    restore = sum(c["records_to_restore"] or 0 for c in result["clients"])
    assert restore == metrics["records_to_restore"]


def test_assigned_application_matches_the_cli_code_path() -> None:
    record = app_input()
    result = assign_application(record, assignor_override="identity")  # type: ignore[arg-type]
    assert result["status"] == reasons.STATUS_ASSIGNED
    assert result["reason_code"] is None
    assert result["error"] == "NONE"
    assert result["assignor"] == "identity"
    assert result["source_rows"] == record["source_rows"]
    expected = result_to_document(assign_scenario(build_scenario(record).scenario, "identity"))  # type: ignore[arg-type]
    clients = by_client(result)  # type: ignore[arg-type]
    for pid, doc in expected["clients"].items():
        assert clients[pid]["active_tasks"] == doc["active"]
        assert clients[pid]["standby_tasks"] == doc["standby"]
        assert clients[pid]["followup_rebalance_deadline_ms"] == doc["followup_rebalance_deadline_ms"]


def test_client_and_consumer_rows_and_metrics() -> None:
    result = assign_application(app_input(), assignor_override="identity")  # type: ignore[arg-type]
    clients = by_client(result)  # type: ignore[arg-type]
    # identity: nothing moves, so nothing is newly placed and nothing must be restored
    assert clients[PID_A]["records_to_restore"] == 0 and clients[PID_A]["active_moves_in"] == 0
    assert clients[PID_A]["num_threads"] == 2
    assert clients[PID_A]["state_load"] == 1  # one store on 0_0 (1_0 is stateless)
    metrics = result["metrics"]
    assert metrics is not None
    assert metrics["tasks"] == 3 and metrics["clients"] == 2 and metrics["threads"] == 3
    assert metrics["active_moves"] == 0
    consumers = {c["consumer_id"]: c for c in result["consumers"]}
    assert set(consumers) == {"a-1", "a-2", "b-1"}
    dealt = [t for c in ("a-1", "a-2") for t in consumers[c]["active_tasks"] + consumers[c]["withheld_tasks"]]
    assert sorted(dealt) == ["0_0", "1_0"]  # a task another thread still owns waits, withheld (cooperative)


def test_assignor_giving_up_keeps_the_previous_assignment_with_an_immediate_followup() -> None:
    result = assign_application(app_input(), assignor_override=spec("GivesUp"))  # type: ignore[arg-type]
    assert result["status"] == reasons.STATUS_KEPT_PREVIOUS
    assert result["reason_code"] == reasons.ASSIGNOR_FAILED
    assert "not today" in (result["reason"] or "")
    clients = by_client(result)  # type: ignore[arg-type]
    assert clients[PID_A]["active_tasks"] == ["0_0", "1_0"]
    assert {c["followup_rebalance_deadline_ms"] for c in clients.values()} == {0}


def test_crashing_assignor_is_handled_like_giving_up() -> None:
    result = assign_application(app_input(), assignor_override=spec("Crashes"))  # type: ignore[arg-type]
    assert result["status"] == reasons.STATUS_KEPT_PREVIOUS
    assert "ZeroDivisionError" in (result["reason"] or "")
    assert by_client(result)[PID_B]["standby_tasks"] == ["0_0"]  # type: ignore[arg-type]


def test_invalid_assignment_is_flagged_with_kafkas_error() -> None:
    result = assign_application(app_input(), assignor_override=spec("InventsTasks"))  # type: ignore[arg-type]
    assert result["status"] == reasons.STATUS_INVALID_ASSIGNMENT
    assert result["error"] == "UNKNOWN_TASK_ID"
    assert result["reason_code"] == reasons.INVALID_ASSIGNMENT


def test_invalid_state_is_rejected_not_raised() -> None:
    result = assign_application(app_input(clients=[]))  # type: ignore[arg-type]
    assert result["status"] == reasons.STATUS_REJECTED
    assert result["reason_code"] == reasons.INVALID_STATE
    assert result["clients"] == [] and result["metrics"] is None
    bad_config = assign_application(app_input(configs={"max.warmup.replicas": "0"}))  # type: ignore[arg-type]
    assert bad_config["reason_code"] == reasons.INVALID_CONFIG


def test_check_application() -> None:
    ok = check_application({"rack.aware.assignment.tags": "zone,az"}, None)
    assert ok.code is None and ok.required_tags == ("zone", "az") and not ok.kafka_compat
    assert check_application({}, None, kafka_compat=True).kafka_compat
    assert check_application({"num.standby.replicas": "x"}, None).code == reasons.INVALID_CONFIG
    assert check_application({"no.such.key": "1"}, None).code == reasons.INVALID_CONFIG
    assert check_application(None, "no-such-assignor").code == reasons.UNKNOWN_ASSIGNOR
    assert check_application(None, "no-such-assignor", assignor_override="identity").code is None


def test_effective_assignor_prefers_the_override() -> None:
    assert effective_assignor("sticky", "identity") == "identity"
    assert effective_assignor("identity", None) == "identity"
    assert effective_assignor(None, None)  # the registry default


@given(st.sampled_from([(None,), ("app",), ("a", "b")]),
       st.lists(st.tuples(st.integers(0, 3), st.integers(0, 8), st.booleans(), st.integers(0, 1)), max_size=4))
def test_task_names_by_number_are_the_ids_as_text(names: tuple[str | None, ...],
                                                 runs: list[tuple[int, int, bool, int]]) -> None:
    # subtopologies with partitions 0..n-1 (names shared between calls) and with a gap (each id named on its own)
    ids = sorted({TaskId(sub, p, names[which % len(names)])
                  for sub, count, gap, which in runs for p in range(count) if not (gap and p == 1)})
    for _ in range(2):
        assert application._names_by_number(ids) == [str(t) for t in ids]
