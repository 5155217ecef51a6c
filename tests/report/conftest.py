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
