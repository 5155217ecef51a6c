"""The engine side of ``taskassign compare``: one application through several assignors, once (one
rebalance each) or through a whole simulation (``--events``), judged by ``analysis.compare``.

Every assignor ``assign -a`` accepts is accepted here, the streams protocol's (``streams_sticky``,
``streams_balanced``) included: their answer is measured in its classic form, as ``assign -a streams_sticky
--metrics`` measures it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from taskassign.analysis.compare import Comparison, RunTotals, run_totals
from taskassign.analysis.metrics import AssignmentMetrics, compute_metrics, state_weight_unit
from taskassign.assignors.registry import ResolvedAssignor, resolve
from taskassign.errors import UserInputError
from taskassign.formats.events import EventsFile
from taskassign.formats.json_io import dump_json, prepare_output_dir, write_output_text
from taskassign.formats.scenario import Scenario
from taskassign.leader.assign import assign_scenario
from taskassign.leader.run import RebalanceResult
from taskassign.model import GroupAssignment
from taskassign.report import ReportData, assignment_data, build_compare_report, parse_simulation
from taskassign.simulate import RebalanceRecord, SimulationResult, simulate

__all__ = ("COMPARE_FORMAT", "AssignorRun", "CompareOutcome", "compare", "parse_assignor_list", "report_runs",
           "simulation_totals", "write_compare_report")

#: The format tag of the ``compare.json`` that ``--out`` writes (``compare --json`` prints the same without it).
COMPARE_FORMAT = "taskassign/compare/v1"


@dataclass(frozen=True, slots=True)
class AssignorRun:
    """One assignor on the input: its (last) assignment's metrics, and the rebalance or the whole run."""

    name: str
    #: The error of its (last) rebalance: ``"NONE"`` when the assignment was valid.
    error: str
    #: Metrics of its assignment (the last one of a simulation); None when a simulation assigned nothing.
    metrics: AssignmentMetrics | None
    result: RebalanceResult | None = None
    simulation: SimulationResult | None = None


@dataclass(frozen=True, slots=True)
class CompareOutcome:
    """Every assignor's run on ``scenario`` and their comparison."""

    scenario: Scenario
    runs: tuple[AssignorRun, ...]
    comparison: Comparison
    simulated: bool

    @property
    def failed(self) -> bool:
        """Some assignor's (last) assignment was invalid."""
        return any(run.error != "NONE" for run in self.runs)

    def to_document(self) -> dict[str, Any]:
        """``compare --json``: ``{"scenario", "simulated", "assignors": {NAME: {"metrics", "totals", "error"}},
        "best"}`` (``totals`` null unless simulated)."""
        doc = self.comparison.to_dict()
        for run in self.runs:
            doc["assignors"][run.name]["error"] = run.error
        return {"scenario": self.scenario.name, "kafka_version": self.scenario.state.configs.kafka_version,
                "simulated": self.simulated, **doc}


def parse_assignor_list(text: str) -> tuple[ResolvedAssignor, ...]:
    """``"a,b,c"`` -> the assignors, each resolved as ``assign -a`` resolves it; an empty item or the same
    assignor twice is a UserInputError."""
    specs = tuple(part.strip() for part in text.split(","))
    if not text.strip() or any(not s for s in specs):
        raise UserInputError(f"--assignors {text!r}: give assignor names separated by commas, e.g. "
                             "-a high_availability,state_aware")
    seen: dict[str, str] = {}
    resolved = []
    for spec in specs:
        assignor = resolve(spec, allow_plugins=True, source="--assignors")
        if assignor.name in seen:
            raise UserInputError(f"--assignors {text!r}: {seen[assignor.name]!r} and {spec!r} name the same assignor")
        seen[assignor.name] = spec
        resolved.append(assignor)
    return tuple(resolved)


def simulation_totals(result: SimulationResult) -> RunTotals:
    """A simulation's run totals (``analysis.compare.run_totals`` over its rebalances)."""
    return run_totals((r.metrics for r in result.rebalances), probing_rebalances=result.probing_rebalances,
                      settled_at_ms=result.settled_at_ms, converged=result.converged)


def _once(scenario: Scenario, assignor: ResolvedAssignor) -> AssignorRun:
    result = assign_scenario(scenario, assignor)
    metrics = compute_metrics(scenario.state, result.group)
    return AssignorRun(assignor.name, result.error.name, metrics, result=result)


def _simulated(scenario: Scenario, assignor: ResolvedAssignor, events: EventsFile, seed: int | None,
               on_rebalance: Callable[[str, RebalanceRecord], None] | None) -> AssignorRun:
    name = assignor.name
    callback = None if on_rebalance is None else (lambda record: on_rebalance(name, record))
    try:
        result = simulate(scenario, events, assignor, seed=seed, on_rebalance=callback)
    except UserInputError as exc:
        raise UserInputError(f"assignor {name}: {exc}") from None
    error = result.rebalances[-1].error if result.rebalances else "NONE"
    return AssignorRun(name, error, result.last_metrics, simulation=result)


def compare(
    scenario: Scenario,
    assignors: Sequence[ResolvedAssignor | str],
    *,
    events: EventsFile | None = None,
    seed: int | None = None,
    on_assignor: Callable[[str], None] | None = None,
    on_rebalance: Callable[[str, RebalanceRecord], None] | None = None,
) -> CompareOutcome:
    """Run ``scenario`` through each assignor (one rebalance, or the simulation ``events`` with ``seed``) and
    compare the (last) assignments. ``on_assignor`` / ``on_rebalance`` report progress."""
    if not assignors:
        raise UserInputError("name at least one assignor to compare (-a A,B)")
    runs = []
    for spec in assignors:
        assignor = resolve(spec)
        if on_assignor is not None:
            on_assignor(assignor.name)
        runs.append(_once(scenario, assignor) if events is None else _simulated(scenario, assignor, events, seed,
                                                                                on_rebalance))
    metrics = {run.name: (run.metrics.to_dict() if run.metrics is not None else {}) for run in runs}
    totals = {run.name: simulation_totals(run.simulation) for run in runs if run.simulation is not None}
    return CompareOutcome(scenario, tuple(runs), Comparison(metrics, totals), events is not None)


def report_runs(outcome: CompareOutcome) -> list[ReportData]:
    """Each assignor's run as the report reads it: a simulation through its document (what ``taskassign report``
    reads), a single rebalance from its metrics."""
    runs = []
    for run in outcome.runs:
        if run.simulation is not None:
            data = parse_simulation(run.simulation.to_document())
            runs.append(replace(data, assignor=run.name))
        elif run.metrics is not None:
            runs.append(assignment_data(outcome.scenario.name, run.name, run.metrics,
                                        state_unit=state_weight_unit(outcome.scenario.state)))
    return runs


def topology_runs(outcome: CompareOutcome) -> tuple[Scenario, list[tuple[str, GroupAssignment | None]],
                                                    Scenario | None]:
    """What the compare page's topology sections draw: the input, each assignor's (last) assignment, and for a
    simulated comparison the scenario the last assignments are drawn over."""
    runs: list[tuple[str, GroupAssignment | None]] = []
    last = None
    for run in outcome.runs:
        result = run.simulation.last_result if run.simulation is not None else run.result
        runs.append((run.name, None if result is None else result.group))
        if run.simulation is not None and last is None:
            last = run.simulation.final_scenario
    return outcome.scenario, runs, last


def write_compare_report(outcome: CompareOutcome, out_dir: str | Path, *, events: str | None = None) -> list[Path]:
    """Write ``report.html`` (one page overlaying the assignors) and ``compare.json`` (``to_document()``) into
    ``out_dir`` (created when missing; a file in the way is an error)."""
    from taskassign.report.topology_sections import compare_sections

    target = prepare_output_dir(out_dir)
    scenario, runs, last = topology_runs(outcome)
    html = build_compare_report(report_runs(outcome), outcome.comparison, scenario=outcome.scenario.name,
                                events=events, sections=compare_sections(scenario, runs, last=last))
    written = [target / "report.html", target / "compare.json"]
    write_output_text(html, written[0])
    dump_json({"format": COMPARE_FORMAT, **outcome.to_document()}, written[1])
    return written
