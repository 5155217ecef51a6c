"""The few calls the CLI and users make, one module per command: ``assign`` (a scenario through an
assignor, with metrics and explanations), ``rebalance`` (a GROUP.json through Kafka's whole leader, as
a document), ``optimize`` (a scenario's current assignment improved for rack traffic), ``streams`` (any
input through Kafka's broker-side streams-group assignors), ``migration`` (one application under the classic
and the streams protocol, side by side).

This is the top of the engine: it may use every package below it (the leader, the formats, the
analysis, the simulator, the pipeline); nothing below imports it.
"""

from taskassign.leader.assign import assign_scenario, result_to_document

__all__ = ("assign_scenario", "result_to_document")
