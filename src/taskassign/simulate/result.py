"""What a simulation produced: one record per rebalance, the restore timeline, the final state.

``SimulationResult.to_document()`` is the ``taskassign/simulation/v1`` document (simulation.json, the
input of ``taskassign report``); ``write(out_dir)`` also writes the rebalances as CSV, the final state
as a scenario file (what the leader would see at the next rebalance) and the last assignment.
"""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from taskassign.analysis.metrics import AssignmentMetrics, metric_fields, state_weight_unit
from taskassign.formats.json_io import dump_json, prepare_output_dir, write_output_text
from taskassign.formats.scenario import Scenario, write_scenario
from taskassign.ids import saturated_long
from taskassign.leader.assign import result_to_document
from taskassign.leader.run import RebalanceResult
from taskassign.model import ApplicationState
from taskassign.simulate.world import Sample

__all__ = ("OUTPUT_FILES", "SIMULATION_FILE", "SIMULATION_FORMAT", "RebalanceRecord", "SimulationResult")

SIMULATION_FORMAT = "taskassign/simulation/v1"
SIMULATION_FILE = "simulation.json"
#: The files ``SimulationResult.write`` may write into its directory.
OUTPUT_FILES = (SIMULATION_FILE, "rebalances.csv", "final.scenario.json", "final.assignment.json")
#: Why a rebalance happened (a rebalance may have several reasons at once).
REASONS = ("initial", "join", "leave", "crash", "rejoin", "probing", "followup", "revocation", "forced")


@dataclass(frozen=True, slots=True)
class RebalanceRecord:
    """One rebalance: when, why, what the assignor answered, and the metrics of its assignment."""

    index: int
    time_ms: int
    reasons: tuple[str, ...]
    leader: str
    assignor: str
    error: str
    probing_rebalance_needed: bool
    #: The earliest follow-up deadline any client was given (None: no follow-up requested).
    next_followup_ms: int | None
    #: Active tasks withheld until their previous owner revoked them (cooperative protocol).
    withheld_tasks: int
    #: After the assignment took effect: records the actives / standbys still have to restore.
    active_records_left: int
    standby_records_left: int
    #: Tasks no living client is processing right after this rebalance (restoring or unassigned).
    tasks_not_running: int
    metrics: Mapping[str, int | float] = field(default_factory=dict)

    def to_dict(self, start_ms: int) -> dict[str, Any]:
        return {
            "index": self.index,
            "time_ms": self.time_ms,
            "offset_ms": self.time_ms - start_ms,
            "reasons": list(self.reasons),
            "leader": self.leader,
            "assignor": self.assignor,
            "error": self.error,
            "probing_rebalance_needed": self.probing_rebalance_needed,
            "next_followup_ms": self.next_followup_ms,
            "withheld_tasks": self.withheld_tasks,
            "active_records_left": saturated_long(self.active_records_left),
            "standby_records_left": saturated_long(self.standby_records_left),
            "tasks_not_running": self.tasks_not_running,
            "metrics": dict(self.metrics),
        }


@dataclass(frozen=True, slots=True)
class SimulationResult:
    """The outcome of ``simulate``."""

    scenario_name: str
    assignor: str
    seed: int
    protocol: str
    start_ms: int
    end_ms: int
    rebalances: tuple[RebalanceRecord, ...]
    samples: tuple[Sample, ...]
    #: The application at the end, as the leader would see it at the next rebalance.
    final_scenario: Scenario
    last_result: RebalanceResult | None
    last_state: ApplicationState
    last_metrics: AssignmentMetrics | None
    #: Why the run stopped early (an invalid assignment, max_rebalances, max_duration_ms), else None.
    stopped_reason: str | None = None
    notes: tuple[str, ...] = ()

    def count(self, reason: str) -> int:
        """Rebalances that had ``reason`` among their reasons."""
        return sum(1 for r in self.rebalances if reason in r.reasons)

    @property
    def probing_rebalances(self) -> int:
        return self.count("probing")

    def by_reason(self) -> dict[str, int]:
        counts = Counter(reason for r in self.rebalances for reason in r.reasons)
        return {reason: counts[reason] for reason in REASONS if counts[reason]}

    @property
    def converged(self) -> bool:
        """The run ended on its own with a valid assignment that asked for no further rebalance."""
        if self.stopped_reason is not None or not self.rebalances:
            return False
        last = self.rebalances[-1]
        return last.error == "NONE" and last.next_followup_ms is None and not last.withheld_tasks

    @property
    def settled_at_ms(self) -> int | None:
        """Offset from the start of the last rebalance, when the run converged."""
        return self.rebalances[-1].time_ms - self.start_ms if self.converged else None

    def to_document(self) -> dict[str, Any]:
        """The ``taskassign/simulation/v1`` document."""
        final: dict[str, Any] | None = None
        m = self.last_metrics
        if m is not None:
            final = {
                "metrics": m.to_dict(),
                "clients": [
                    {
                        "process_id": str(c.process_id), "rack": c.rack, "threads": c.threads, "active": c.active,
                        "standby": c.standby, "state_load": c.state_load, "thread_active": list(c.thread_active),
                        "thread_total": list(c.thread_total), "thread_state": list(c.thread_state),
                    }
                    for c in m.client_metrics
                ],
                "state_unit": state_weight_unit(self.last_state),
                "subtopology_skews": dict(m.subtopology_skews),
                "rack_traffic": [
                    {"client_rack": row, "partition_rack": col, "partitions": value}
                    for (row, col), value in m.rack_traffic.items()
                ],
            }
        return {
            "format": SIMULATION_FORMAT,
            "scenario": self.scenario_name,
            "assignor": self.assignor,
            "kafka_version": self.last_state.configs.kafka_version,
            "seed": self.seed,
            "protocol": self.protocol,
            "start_ms": self.start_ms,
            "end_ms": self.end_ms,
            "summary": {
                "rebalances": len(self.rebalances),
                "by_reason": self.by_reason(),
                "probing_rebalances": self.probing_rebalances,
                "converged": self.converged,
                "settled_at_ms": self.settled_at_ms,
                "stopped_reason": self.stopped_reason,
                "notes": list(self.notes),
            },
            "rebalances": [r.to_dict(self.start_ms) for r in self.rebalances],
            "samples": [
                {
                    "time_ms": s.time_ms, "offset_ms": s.time_ms - self.start_ms,
                    "active_records_left": saturated_long(s.active_records_left),
                    "standby_records_left": saturated_long(s.standby_records_left),
                    "tasks_not_running": s.tasks_not_running, "clients_alive": s.clients_alive,
                }
                for s in self.samples
            ],
            "final": final,
        }

    def rebalances_csv(self) -> str:
        """One row per rebalance; metrics as columns (docs/metrics.md names)."""
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        head = ["index", "time_ms", "offset_ms", "reasons", "leader", "error", "probing_rebalance_needed",
                "next_followup_ms", "withheld_tasks", "active_records_left", "standby_records_left",
                "tasks_not_running"]
        names = [f.name for f in metric_fields()]
        writer.writerow(head + names)
        for r in self.rebalances:
            writer.writerow([
                r.index, r.time_ms, r.time_ms - self.start_ms, ";".join(r.reasons), r.leader, r.error,
                str(r.probing_rebalance_needed).lower(), "" if r.next_followup_ms is None else r.next_followup_ms,
                r.withheld_tasks, saturated_long(r.active_records_left), saturated_long(r.standby_records_left),
                r.tasks_not_running,
                *(r.metrics.get(n, "") for n in names),
            ])
        return out.getvalue()

    def write(self, out_dir: str | Path) -> list[Path]:
        """Write simulation.json, rebalances.csv, final.scenario.json and final.assignment.json."""
        target = Path(out_dir)
        prepare_output_dir(target)
        written = [target / SIMULATION_FILE, target / "rebalances.csv"]
        dump_json(self.to_document(), written[0])
        write_output_text(self.rebalances_csv(), written[1])
        final = target / "final.scenario.json"
        if self.final_scenario.state.clients or not self.final_scenario.state.tasks:
            write_scenario(self.final_scenario, final)
            written.append(final)
        if self.last_result is not None:
            document = result_to_document(self.last_result)
            if self.last_metrics is not None:
                document["metrics"] = self.last_metrics.to_dict()
            path = target / "final.assignment.json"
            dump_json(document, path)
            written.append(path)
        return written
