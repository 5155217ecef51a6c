"""What taskassign writes, taskassign reads back (issue 18, point 8): values at the edge of Kafka's range
(Java longs: clocks, offsets, sizes, rates) are refused at input with their valid range, or every file and
table the writers produce from them reads back, whatever the values.

Hypothesis draws scenarios whose numbers sit at and around Long.MAX_VALUE, and event scripts with extreme
append rates and horizons; each goes through the readers, and whatever they accept through the writers
(assignment file with metrics, simulation.json, final scenario and assignment, the pipeline's output rows)
and back through the readers (and Arrow's int64 columns for the pipeline)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from taskassign.analysis.metrics import compute_metrics
from taskassign.errors import ScenarioError, UserInputError
from taskassign.formats.assignment import parse_assignment
from taskassign.formats.events import parse_events
from taskassign.formats.json_io import load_json_text, to_json_text
from taskassign.formats.scenario import parse_scenario, scenario_to_dict
from taskassign.ids import LONG_MAX
from taskassign.leader.assign import assign_scenario, result_to_document
from taskassign.report.data import parse_simulation
from taskassign.simulate import simulate
from tests.helpers import EXAMPLES_DIR

BASE = json.loads((EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json").read_text())

#: Longs near the edges, and anywhere.
longs = st.one_of(st.sampled_from([0, 1, LONG_MAX, LONG_MAX - 1, LONG_MAX - 600_000, 2**62, 2**63, 2**64]),
                  st.integers(0, LONG_MAX), st.integers(LONG_MAX - 10**9, LONG_MAX + 10))


def read_back(text: str) -> Any:
    """A written document as its reader sees it (through the same JSON parser)."""
    return load_json_text(text, "written")


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    doc = copy.deepcopy(BASE)
    doc["now_ms"] = draw(longs)
    doc["configs"]["probing.rebalance.interval.ms"] = draw(st.sampled_from([60_000, 600_000, 2**40, LONG_MAX]))
    for task in doc["tasks"]:
        if task.get("stores"):
            task["changelog_end_offset_sum"] = draw(st.one_of(longs, st.just(-3)))
            task["state_bytes"] = draw(longs)
    for client in doc["clients"]:
        for t in list(client.get("task_offset_sums", {})):
            client["task_offset_sums"][t] = draw(st.one_of(longs, st.sampled_from([-2, -3])))
    return doc


def accepted(doc: dict[str, Any]) -> Any:
    try:
        return parse_scenario(doc)
    except ScenarioError as exc:
        assert exc.path.startswith("$."), exc
        return None


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_assign_writes_what_validate_and_assign_read(doc: dict[str, Any]) -> None:
    scenario = accepted(doc)
    if scenario is None:
        return
    result = assign_scenario(scenario, "high_availability")
    document = result_to_document(result)
    document["metrics"] = compute_metrics(scenario.state, result.group).to_dict()
    written = parse_assignment(read_back(to_json_text(document)))
    assert {a.process_id for a in written.assignment.assignments} == set(scenario.state.clients)
    again = parse_scenario(read_back(to_json_text(scenario_to_dict(scenario))))
    assert scenario_to_dict(again) == scenario_to_dict(scenario)


@st.composite
def scripts(draw: st.DrawFn) -> dict[str, Any]:
    events: list[dict[str, Any]] = [
        {"type": "append_rate", "records_per_s": draw(st.one_of(longs, st.integers(0, 10**6)))},
        {"type": "advance", "ms": draw(st.integers(0, 3_600_000))},
        {"type": "join", "count": 1, "threads": 1, "rack": "rack-a", "tags": {"zone": "eu-west-1a"}},
        {"type": "advance", "ms": draw(st.integers(0, 3_600_000))},
    ]
    return {"format": "taskassign/events/v1", "events": events, "sample_interval_ms": 600_000,
            "max_duration_ms": draw(st.sampled_from([3_600_000, 86_400_000, 604_800_000, LONG_MAX])),
            "max_rebalances": 20}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios(), scripts())
def test_simulate_writes_what_report_and_assign_read(doc: dict[str, Any], script: dict[str, Any]) -> None:
    scenario = accepted(doc)
    if scenario is None:
        return
    try:
        result = simulate(scenario, parse_events(script), "high_availability")
    except UserInputError:
        return  # refused at input (a rate or horizon past the range, an unknown end offset): a clean error
    parse_simulation(read_back(to_json_text(result.to_document())))
    if result.final_scenario.state.clients:
        parse_scenario(read_back(to_json_text(scenario_to_dict(result.final_scenario))))
    if result.last_result is not None:
        parse_assignment(read_back(to_json_text(result_to_document(result.last_result))))


@pytest.mark.parametrize("now_ms", [LONG_MAX, LONG_MAX - 599_999])
def test_now_ms_past_the_range_is_refused_with_the_range(now_ms: int) -> None:
    doc = copy.deepcopy(BASE)
    doc["now_ms"] = now_ms
    with pytest.raises(ScenarioError, match=rf"\$\.now_ms: must be between 0 and {LONG_MAX - 600_000}"):
        parse_scenario(doc)
    doc["now_ms"] = LONG_MAX - 600_000
    assert parse_scenario(doc).state.now_ms == LONG_MAX - 600_000
