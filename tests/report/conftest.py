from __future__ import annotations

from pathlib import Path

import pytest

from taskassign.simulate import simulate
from tests.helpers import PID_2
from tests.simulate.assignors import WARMUP
from tests.simulate.scenarios import advance, events, join, one_client_owns_everything


@pytest.fixture(scope="session")
def simulation_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small simulation written as taskassign simulate --out writes it: a client joins, warm-ups, probing."""
    scenario = one_client_owns_everything(6, stateless=2, rack="rack-a", max_warmup_replicas=1,
                                          acceptable_recovery_lag=10_000, probing_rebalance_interval_ms=60_000)
    script = events(join(PID_2, rack="rack-b", threads=2), advance(30_000), {"type": "rebalance"},
                    sample_interval_ms=10_000)
    out = tmp_path_factory.mktemp("simulation")
    simulate(scenario, script, WARMUP).write(out)
    return out


@pytest.fixture(scope="session")
def report_path(simulation_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of ``simulation_dir``, written once for every test that reads it."""
    from taskassign.report import write_report

    return write_report(simulation_dir, tmp_path_factory.mktemp("report") / "report.html")


@pytest.fixture(scope="session")
def long_simulation_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """238 rebalances over 77 minutes (joins, crashes, probing, revocations, forced): the report must stay
    readable at this density."""
    scenario = one_client_owns_everything(12, stateless=2, threads=2, rack="rack-a", max_warmup_replicas=1,
                                          acceptable_recovery_lag=10_000, probing_rebalance_interval_ms=60_000,
                                          num_standby_replicas=1)
    items = [join(PID_2, rack="rack-b", threads=2)]
    for _ in range(70):
        items += [advance(45_000), {"type": "rebalance"}, advance(20_000), {"type": "perturb", "count": 1}]
    out = tmp_path_factory.mktemp("long-simulation")
    result = simulate(scenario, events(*items, sample_interval_ms=10_000, seed=3), "high_availability")
    assert len(result.rebalances) >= 200
    result.write(out)
    return out


@pytest.fixture(scope="session")
def long_report_path(long_simulation_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from taskassign.report import write_report

    return write_report(long_simulation_dir, tmp_path_factory.mktemp("long-report") / "report.html")


@pytest.fixture(scope="session")
def compare_report_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``taskassign compare --out`` of two assignors through a rolling restart."""
    from taskassign.api.application import read_application
    from taskassign.api.compare import compare, write_compare_report
    from taskassign.simulate import read_events
    from tests.helpers import EXAMPLES_DIR

    scenario = read_application(EXAMPLES_DIR / "scenarios" / "two-racks-one-standby.scenario.json")
    script = read_events(EXAMPLES_DIR / "events" / "rolling-restart.events.json")
    outcome = compare(scenario, ["high_availability", "state_aware"], events=script)
    return write_compare_report(outcome, tmp_path_factory.mktemp("compare"))[0]
