"""The package's face: the names README and docs/ show import, and one version everywhere."""

from __future__ import annotations

import importlib
import importlib.metadata

import taskassign
from taskassign.pipeline.manifest import taskassign_version


def test_version_is_the_installed_distributions() -> None:
    assert taskassign.__version__ == importlib.metadata.version("taskassign") == taskassign_version()


def test_every_exported_name_resolves() -> None:
    for name in taskassign.__all__:
        assert getattr(taskassign, name) is not None, name


def test_documented_module_paths_import() -> None:
    """Paths the README and docs/ name for users (plug-ins, helpers) keep working after the layout moves."""
    for module, name in [
        ("taskassign.task_assignment_utils", "default_standby_task_assignment"),
        ("taskassign.utils", "default_standby_task_assignment"),
        ("taskassign.api", "assign_scenario"),
        ("taskassign.api", "result_to_document"),
        ("taskassign.assignors.state_aware", "StateAwareTaskAssignor"),
        ("taskassign.leader.run", "rebalance"),
        ("taskassign.formats.scenario", "read_scenario"),
        ("taskassign.analysis.metrics", "compute_metrics"),
    ]:
        assert hasattr(importlib.import_module(module), name), f"{module}.{name}"
