"""The verdict: the deciding metrics in a fixed order, every option's risks, the clients named."""

from __future__ import annotations

from dataclasses import replace

from taskassign.analysis.metrics import compute_metrics
from taskassign.analysis.verdict import Option, ProbingOutlook, over_capacity, verdict
from taskassign.api.application import read_application
from taskassign.leader.assign import assign_scenario
from tests.helpers import EXAMPLES_DIR

EXAMPLE = EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json"


def _metrics(assignor: str):  # type: ignore[no-untyped-def]
    scenario = read_application(EXAMPLE)
    return compute_metrics(scenario.state, assign_scenario(scenario, assignor).group)


def test_all_copies_in_one_rack_outranks_records_to_restore() -> None:
    ha, sticky = _metrics("high_availability"), _metrics("sticky")
    assert ha.rack_colocated_tasks == 0 < sticky.rack_colocated_tasks
    assert ha.records_to_restore > sticky.records_to_restore  # sticky moves less, but leaves a rack with every copy
    found = verdict([Option("high_availability", ha), Option("sticky", sticky)])
    assert found.better == "high_availability"
    assert found.deciding[0] == "rack_colocated_tasks"
    assert found.reasons[0].endswith(f"high_availability 0, sticky {sticky.rack_colocated_tasks}")
    assert any(r.startswith("sticky: all copies of") for r in found.risks)
    assert found.to_dict()["better"] == "high_availability"


def test_an_invalid_option_loses_and_equal_options_have_no_winner() -> None:
    ha = _metrics("high_availability")
    assert verdict([Option("a", ha, "TASK_MISSING"), Option("b", ha)]).better == "b"
    tie = verdict([Option("a", ha), Option("b", ha)])
    assert tie.better is None and "no option is better" in tie.headline


def test_risks_name_over_capacity_clients_pile_ups_and_probing_rebalances() -> None:
    ha = _metrics("high_availability")
    rows = list(ha.client_metrics)
    rows[0] = replace(rows[0], active=rows[0].active + 5)
    heavy = replace(ha, client_metrics=tuple(rows), standby_pile_up=2.5)
    assert over_capacity(heavy) == (rows[0].process_id,)
    probing = ProbingOutlook(rounds=3, interval_ms=600_000, warmups=2, max_warmup_replicas=2)
    found = verdict([Option("x", heavy, probing=probing), Option("y", ha)], {rows[0].process_id: "orders-i0"})
    risks = " | ".join(found.risks)
    assert "x: 1 client(s) over capacity" in risks and "(orders-i0)" in risks
    assert "standby pile-up 2.5" in risks
    assert "3 probing rebalance(s) ahead, one every 10 min" in risks and "at least 30 min" in risks


def test_a_tie_on_the_first_metric_is_broken_by_the_next() -> None:
    ha = _metrics("high_availability")
    more = replace(ha, records_to_restore=ha.records_to_restore + 1)
    worse = replace(ha, rack_colocated_tasks=ha.rack_colocated_tasks + 1)
    found = verdict([Option("more", more), Option("less", ha), Option("worse", worse)])
    assert found.better == "less"
    assert found.deciding[:2] == ("rack_colocated_tasks", "records_to_restore")
    assert "(as more), then fewest records to restore" in found.headline
