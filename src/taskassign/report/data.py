"""Reading a simulation result (``taskassign/simulation/v1``) for the report, with clear errors.

The report only needs part of the document; what it reads is type-checked and every problem raises
ScenarioError naming the JSON path, so a truncated or hand-edited file fails with a message, not a
traceback inside matplotlib.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskassign.analysis.compare import RunTotals, run_totals
from taskassign.analysis.metrics import AssignmentMetrics, even_spread
from taskassign.errors import UserInputError
from taskassign.formats.json_io import JsonObject, describe, fail, load_json_file

#: simulate.result's file name and format tag, repeated here: importing the simulator loads the leader, the rack
#: optimisers, numpy and OR-Tools (1.8 s of the 2.2 s a page took to start); tests/report/test_data.py checks
#: that the two agree.
SIMULATION_FORMAT = "taskassign/simulation/v1"
SIMULATION_FILE = "simulation.json"

__all__ = ("ClientLoad", "RebalanceRow", "ReportData", "SampleRow", "assignment_data", "client_loads",
           "parse_simulation", "read_simulation")


@dataclass(frozen=True, slots=True)
class RebalanceRow:
    index: int
    offset_ms: int
    reasons: tuple[str, ...]
    error: str
    probing_rebalance_needed: bool
    withheld_tasks: int
    active_records_left: int
    standby_records_left: int
    tasks_not_running: int
    metrics: Mapping[str, int | float]


@dataclass(frozen=True, slots=True)
class SampleRow:
    offset_ms: int
    active_records_left: int
    standby_records_left: int
    tasks_not_running: int
    clients_alive: int


@dataclass(frozen=True, slots=True)
class ClientLoad:
    process_id: str
    rack: str | None
    threads: int
    active: int
    standby: int
    state_load: int
    thread_active: tuple[int, ...]
    thread_total: tuple[int, ...]
    #: State load per thread (state weights: bytes when the scenario gives ``state_bytes``, else stores).
    thread_state: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class ReportData:
    """Everything the report shows."""

    source: str
    scenario: str
    assignor: str
    seed: int
    protocol: str
    start_ms: int
    end_ms: int
    summary: Mapping[str, Any]
    rebalances: tuple[RebalanceRow, ...]
    samples: tuple[SampleRow, ...]
    final_metrics: Mapping[str, int | float]
    clients: tuple[ClientLoad, ...]
    rack_traffic: tuple[tuple[str, str, float], ...]
    #: What the state weights count: "bytes" (``state_bytes``) or "stores" (sizes unknown).
    state_unit: str = "bytes"

    @property
    def simulated(self) -> bool:
        """A run of rebalances (a simulation), not one assignment."""
        return bool(self.rebalances)

    @property
    def first_metrics(self) -> Mapping[str, int | float]:
        """The metrics of the run's first assignment (the final one's when there was a single assignment)."""
        return self.rebalances[0].metrics if self.rebalances else self.final_metrics

    @property
    def totals(self) -> RunTotals | None:
        """The run's totals (every rebalance's moves and restores summed); None for a single assignment."""
        if not self.rebalances:
            return None
        s = self.summary
        settled = s.get("settled_at_ms")
        return run_totals((r.metrics for r in self.rebalances), probing_rebalances=int(s.get("probing_rebalances", 0)),
                          settled_at_ms=settled if isinstance(settled, int) else None,
                          converged=bool(s.get("converged")))


def client_loads(metrics: AssignmentMetrics) -> tuple[ClientLoad, ...]:
    """The report's per-client rows of an assignment's metrics."""
    return tuple(
        ClientLoad(str(c.process_id), c.rack, c.threads, c.active, c.standby, c.state_load, c.thread_active,
                   c.thread_total, c.thread_state or even_spread(c.state_load, c.threads))
        for c in metrics.client_metrics)


def assignment_data(scenario: str, assignor: str, metrics: AssignmentMetrics, *, state_unit: str = "bytes",
                    source: str = "") -> ReportData:
    """The report of a single assignment (``compare`` without ``--events``): no rebalances, no timeline."""
    return ReportData(
        source=source, scenario=scenario, assignor=assignor, seed=0, protocol="", start_ms=0, end_ms=0, summary={},
        rebalances=(), samples=(), final_metrics=metrics.to_dict(), clients=client_loads(metrics),
        rack_traffic=tuple((row, col, value) for (row, col), value in metrics.rack_traffic.items()),
        state_unit=state_unit,
    )


def read_simulation(path: str | Path) -> ReportData:
    """Read ``simulation.json``, or the ``--out`` directory of ``taskassign simulate`` that holds it."""
    p = Path(path)
    if p.is_dir():
        p = p / SIMULATION_FILE
        if not p.is_file():
            raise UserInputError(f"{path}: no {SIMULATION_FILE} in this directory (the --out of taskassign simulate)")
    return parse_simulation(load_json_file(p), source=str(p))


def _ints(values: Any, path: str, source: str | None) -> tuple[int, ...]:
    if not isinstance(values, list) or not all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        fail(path, f"expected a list of integers, got {describe(values)}", source)
    return tuple(values)


def _numbers(obj: JsonObject, key: str) -> dict[str, int | float]:
    result: dict[str, int | float] = {}
    inner = obj.obj(key)
    for name, value in inner.data.items():
        if isinstance(value, bool) or not isinstance(value, int | float):
            fail(inner.sub(name), f"expected a number, got {describe(value)}", obj.source)
        result[name] = value
    return result


def parse_simulation(doc: Any, *, source: str | None = None) -> ReportData:
    root = JsonObject(doc, "$", source)
    root.expect_format(SIMULATION_FORMAT, what=" (the simulation.json of taskassign simulate)")
    rebalances = []
    for i, item in enumerate(root.array("rebalances")):
        row = JsonObject(item, f"$.rebalances[{i}]", source)
        rebalances.append(RebalanceRow(
            index=row.integer("index", minimum=0),
            offset_ms=row.integer("offset_ms", minimum=0),
            reasons=tuple(row.string_list("reasons", unique=False)),
            error=row.string("error"),
            probing_rebalance_needed=row.boolean("probing_rebalance_needed"),
            withheld_tasks=row.integer("withheld_tasks", minimum=0),
            active_records_left=row.integer("active_records_left", minimum=0),
            standby_records_left=row.integer("standby_records_left", minimum=0),
            tasks_not_running=row.integer("tasks_not_running", minimum=0),
            metrics=_numbers(row, "metrics"),
        ))
    samples = []
    for i, item in enumerate(root.array("samples")):
        row = JsonObject(item, f"$.samples[{i}]", source)
        samples.append(SampleRow(
            offset_ms=row.integer("offset_ms", minimum=0),
            active_records_left=row.integer("active_records_left", minimum=0),
            standby_records_left=row.integer("standby_records_left", minimum=0),
            tasks_not_running=row.integer("tasks_not_running", minimum=0),
            clients_alive=row.integer("clients_alive", minimum=0),
        ))
    final_metrics: dict[str, int | float] = {}
    clients: list[ClientLoad] = []
    traffic: list[tuple[str, str, float]] = []
    state_unit = "bytes"
    if root.raw("final", None) is not None:
        final = root.obj("final")
        final_metrics = _numbers(final, "metrics")
        state_unit = final.string("state_unit", "bytes")
        if state_unit not in ("bytes", "stores"):
            final.fail("state_unit", f"expected 'bytes' or 'stores', got {state_unit!r}")
        for i, item in enumerate(final.array("clients")):
            c = JsonObject(item, f"{final.sub('clients')}[{i}]", source)
            threads, state_load = c.integer("threads", minimum=1), c.integer("state_load", minimum=0)
            thread_state = (_ints(c.raw("thread_state"), c.sub("thread_state"), source)
                            if c.raw("thread_state", None) is not None else even_spread(state_load, threads))
            clients.append(ClientLoad(
                process_id=c.string("process_id"), rack=c.string("rack", None, nullable=True),
                threads=threads, active=c.integer("active", minimum=0),
                standby=c.integer("standby", minimum=0), state_load=state_load,
                thread_active=_ints(c.raw("thread_active"), c.sub("thread_active"), source),
                thread_total=_ints(c.raw("thread_total"), c.sub("thread_total"), source),
                thread_state=thread_state,
            ))
        for i, item in enumerate(final.array("rack_traffic")):
            cell = JsonObject(item, f"{final.sub('rack_traffic')}[{i}]", source)
            amount = cell.raw("partitions")
            if isinstance(amount, bool) or not isinstance(amount, int | float) or amount < 0:
                cell.fail("partitions", f"expected a number >= 0, got {describe(amount)}")
            traffic.append((cell.string("client_rack"), cell.string("partition_rack"), float(amount)))
    summary = root.obj("summary").data
    return ReportData(
        source=source or "",
        scenario=root.string("scenario"),
        assignor=root.string("assignor"),
        seed=root.integer("seed"),
        protocol=root.string("protocol"),
        start_ms=root.integer("start_ms"),
        end_ms=root.integer("end_ms"),
        summary=dict(summary),
        rebalances=tuple(rebalances),
        samples=tuple(samples),
        final_metrics=final_metrics,
        clients=tuple(clients),
        rack_traffic=tuple(traffic),
        state_unit=state_unit,
    )
