"""Rebalance simulation: replay events (joins, crashes, restarts, restores) and watch an assignor converge.

``simulate(scenario, read_events(path), "high_availability")`` returns a SimulationResult (with
``"streams_sticky"`` or ``"streams_balanced"``: under the streams protocol, KIP-1071); the convergence
harness of Kafka's TaskAssignorConvergenceTest lives in ``convergence``.
"""

from taskassign.formats.events import EventsFile, parse_events, read_events
from taskassign.simulate.result import OUTPUT_FILES, RebalanceRecord, SimulationResult
from taskassign.simulate.runner import simulate

__all__ = ("OUTPUT_FILES", "EventsFile", "RebalanceRecord", "SimulationResult", "parse_events", "read_events",
           "simulate")
