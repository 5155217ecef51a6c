"""The few calls the CLI and users make, one module per command: ``assign`` (a scenario through an
assignor, with metrics and explanations), ``rebalance`` (a GROUP.json through Kafka's whole leader, as
a document), ``optimize`` (a scenario's current assignment improved for rack traffic), ``streams`` (any
input through Kafka's broker-side streams-group assignors), ``migration`` (one application under the classic
and the streams protocol, side by side), ``check_assignor`` (an assignor held to Kafka's rules on many
applications, ``random_applications`` among them: ``taskassign check-assignor``).

This is the top of the engine: it may use every package below it (the leader, the formats, the
analysis, the simulator, the pipeline); nothing below imports it.
"""

from taskassign.api.check_assignor import AssignorCheckReport, check_case, check_cases
from taskassign.api.random_applications import random_application, random_applications
from taskassign.leader.assign import assign_scenario, result_to_document

__all__ = (
    "AssignorCheckReport",
    "assign_scenario",
    "check_case",
    "check_cases",
    "random_application",
    "random_applications",
    "result_to_document",
)
