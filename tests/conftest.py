from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from tests import progress

settings.register_profile(
    "default", deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
settings.register_profile("ci", parent=settings.get_profile("default"), max_examples=50)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))


def pytest_configure(config: pytest.Config) -> None:
    progress.register(config)
@pytest.fixture(autouse=True)
def _stop_plugin_processes() -> Iterator[None]:
    """A plug-in's process lives for the run (assignors.plugin_process): each test starts its own, so that a
    test's plug-in files are the ones imported."""
    yield
    module = sys.modules.get("taskassign.assignors.plugin_process")
    if module is not None:
        module.stop_hosts()
        module.set_plugin_limits(module.DEFAULT_PLUGIN_LIMITS)  # a CLI test's --plugin-timeout ends with it
