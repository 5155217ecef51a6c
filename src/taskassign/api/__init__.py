"""The few calls the CLI and users make."""

from taskassign.leader.assign import assign_scenario, result_to_document

__all__ = ("assign_scenario", "result_to_document")
