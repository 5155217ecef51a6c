"""Rack-aware task optimisation (KIP-925): cost model, flow graphs, Kafka's exact solver, a fast solver,
pairwise standby exchanges, and the internal optimiser the high-availability and sticky assignors call."""

from taskassign.rack.internal import RackAwareTaskAssignor

__all__ = ("RackAwareTaskAssignor",)
