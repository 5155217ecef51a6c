"""``api.compare``: the same input through several assignors, once or simulated."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from taskassign.analysis.metrics import compute_metrics
from taskassign.api.application import read_application
from taskassign.api.compare import compare, parse_assignor_list, write_compare_report
from taskassign.errors import AssignorNotFoundError, UserInputError
from taskassign.leader.assign import assign_scenario
from taskassign.simulate import read_events, simulate
from tests.helpers import EXAMPLES_DIR

SCENARIO = read_application(EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json")
EVENTS = read_events(EXAMPLES_DIR / "events" / "rolling-restart.events.json")


def test_each_assignor_gets_the_metrics_assign_gives_it() -> None:
    outcome = compare(SCENARIO, ["high_availability", "state_aware", "streams_sticky"])
    assert outcome.comparison.names == ("high_availability", "state_aware", "streams_sticky")
    for run in outcome.runs:
        expected = compute_metrics(SCENARIO.state, assign_scenario(SCENARIO, run.name).group).to_dict()
        assert outcome.comparison.metrics[run.name] == expected
    assert not outcome.simulated and outcome.comparison.totals == {} and not outcome.failed


def test_with_events_each_assignor_runs_the_simulation_and_gets_its_totals() -> None:
    outcome = compare(SCENARIO, ["high_availability", "state_aware"], events=EVENTS)
    alone = simulate(SCENARIO, EVENTS, "state_aware")
    totals = outcome.comparison.totals["state_aware"]
    assert totals.rebalances == len(alone.rebalances)
    assert totals.active_moves == sum(int(r.metrics["active_moves"]) for r in alone.rebalances)
    assert totals.settled_at_ms == alone.settled_at_ms
    assert outcome.comparison.metrics["state_aware"] == alone.last_metrics.to_dict()  # type: ignore[union-attr]
    doc = outcome.to_document()
    assert doc["simulated"] and doc["assignors"]["high_availability"]["totals"]["rebalances"] > 1


def test_assignor_lists_are_checked_before_anything_runs() -> None:
    parsed = parse_assignor_list(" high_availability, state-aware ")
    assert [a.spec for a in parsed] == ["high_availability", "state-aware"]
    assert [a.name for a in parsed] == ["high_availability", "state_aware"]
    with pytest.raises(UserInputError, match="name the same assignor"):
        parse_assignor_list("state_aware,state-aware")
    with pytest.raises(UserInputError, match="separated by commas"):
        parse_assignor_list("high_availability,,sticky")
    with pytest.raises(AssignorNotFoundError):
        parse_assignor_list("high_availability,nope")


def test_a_streams_assignor_with_classic_events_names_the_assignor() -> None:
    classic = replace(EVENTS, protocol="eager")
    with pytest.raises(UserInputError, match=r"assignor streams_sticky: .*streams protocol"):
        compare(SCENARIO, ["high_availability", "streams_sticky"], events=classic)


def test_the_report_overlays_every_assignor(tmp_path: Path) -> None:
    outcome = compare(SCENARIO, ["high_availability", "state_aware"], events=EVENTS)
    written = write_compare_report(outcome, tmp_path / "out")
    assert [p.name for p in written] == ["report.html", "compare.json"]
    html = written[0].read_text(encoding="utf-8")
    for key in ("thread_state_overlay", "restore_overlay", "movements_overlay"):
        assert f'id="plot-{key}"' in html
    legend = html.split('id="assignor-legend"', 1)[1].split("</div>", 1)[0]
    assert "high_availability" in legend and "state_aware" in legend
    assert html.count('<td class="best">') >= 1 and "<script" not in html
    first = html.split("<h2>Metrics of each assignor's first assignment</h2>", 1)[1]
    for run in outcome.runs:
        assert run.simulation is not None
        moves = int(run.simulation.rebalances[0].metrics["active_moves"])
        assert f"<th>{run.name}</th>" in first.split("</thead>", 1)[0]
        assert re.search(rf"<code>active_moves</code></td>(<td[^>]*>[^<]*</td>){{0,1}}<td[^>]*>{moves:,}</td>", first)
